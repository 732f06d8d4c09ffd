/**
 * @module `/receipts/:id`: a stored receipt for a person. The signature is
 * checked here in the browser against the key the agent card lists for the
 * receipt's key_version (the page does not take the server's word for it),
 * the four hashes are shown, and a paste box checks any receipt — and, given
 * the request, recomputes the hashes — naming the check that fails.
 * The agent card is fetched once at load: checks need no further request.
 */
import { useEffect, useState } from 'preact/hooks';
import { getJson, getText, errorFrom, type ApiErrorBody } from './api.js';
import { HASH_FIELDS } from 'agent-output-verifier/receipts';
import { checkReceipt, type ReceiptCheckResult } from './receipt-check.js';
import { ColumnTable } from './column-table.js';
import { Scores, type Score } from './scores.js';

type Load =
  | { state: 'loading' }
  | { state: 'error'; error: ApiErrorBody }
  | { state: 'ready'; text: string; card: unknown; check: ReceiptCheckResult };

/** Step names as a person reads them once the step passed (a failing step shows the verifier's check id). */
const PASSED_LABEL: Record<string, string> = { key_not_found: 'key', request_mismatch: 'request' };

function CheckOutcome({ result, id }: { result: ReceiptCheckResult; id: string }) {
  return (
    <div class={`check-outcome ${result.valid ? 'valid' : 'invalid'}`} id={id} data-valid={String(result.valid)} data-failed-check={result.failedCheck}>
      <p class="status" role="status">
        {result.valid ? (
          <>
            <span class="badge pass">✓</span> <strong>signature valid</strong> — checked in this browser with key <code>{result.keyVersion}</code> from
            the agent card.
          </>
        ) : (
          <>
            <span class="badge fail">✗</span> <strong>invalid</strong>: the <code class="failed-check">{result.failedCheck}</code> check failed —{' '}
            {result.message}.
          </>
        )}
      </p>
      <ol class="steps">
        {result.steps.map((s, i) => (
          <li key={i} class={s.ok ? 'ok' : 'bad'}>
            <span aria-hidden="true">{s.ok ? '✓' : '✗'}</span> <code>{s.ok ? (PASSED_LABEL[s.check] ?? s.check) : s.check}</code>
            <span class="sr-only">{s.ok ? ' passed' : ' failed'}</span>: {s.detail}
          </li>
        ))}
      </ol>
    </div>
  );
}

function Hashes({ result }: { result: ReceiptCheckResult }) {
  return (
    <ColumnTable class="hashes" caption="Hashes (SHA-256 of the RFC 8785 form)" columns={['Hash', 'In the receipt', 'Recomputed from the request']}>
      {HASH_FIELDS.map((h) => {
        const v = result.hashes[h];
        return (
          <tr key={h}>
            <th scope="row">
              <code>{h}</code>
            </th>
            <td>
              <code class="hash">{v ? v.receipt : '— (compact receipt)'}</code>
            </td>
            <td>
              {v?.computed ? (
                <code class={`hash ${v.computed === v.receipt ? 'same' : 'differs'}`}>
                  {v.computed} {v.computed === v.receipt ? '(same)' : '(differs)'}
                </code>
              ) : (
                <span class="muted">paste the request below</span>
              )}
            </td>
          </tr>
        );
      })}
    </ColumnTable>
  );
}

interface ReceiptView {
  result?: string;
  summary?: { blocking_checks?: string[] };
  task_id?: string;
  agent_id?: string | null;
  verified_at?: string;
  verifier_version?: string;
  enforce_rules?: boolean;
  strict_content_check?: boolean;
  schema_compliance?: Score;
  integrity_checks?: Score;
  overall?: Score;
}

export function ReceiptPage({ id }: { id: string }) {
  const [load, setLoad] = useState<Load>({ state: 'loading' });
  const [pasted, setPasted] = useState('');
  const [request, setRequest] = useState('');
  const [pastedResult, setPastedResult] = useState<ReceiptCheckResult | null>(null);

  useEffect(() => {
    void (async () => {
      const [res, card] = await Promise.all([
        getText(`/verifications/${encodeURIComponent(id)}`, { headers: { accept: 'application/json' } }),
        getJson<unknown>('/.well-known/agent-card.json'),
      ]);
      if (res.status !== 200) return setLoad({ state: 'error', error: errorFrom(res) });
      if (!card.ok) return setLoad({ state: 'error', error: card.error });
      setLoad({ state: 'ready', text: res.text, card: card.value, check: checkReceipt(res.text, card.value) });
      setPasted(res.text);
    })().catch(() => setLoad({ state: 'error', error: { code: 'network', message: 'The service could not be reached.', status: 0 } }));
  }, [id]);

  if (load.state === 'loading') {
    return (
      <main id="main">
        <h1>Receipt</h1>
        <p>Loading receipt {id}…</p>
      </main>
    );
  }
  if (load.state === 'error') {
    return (
      <main id="main">
        <h1>Receipt</h1>
        <p class="error-text">
          <code>{load.error.code}</code>: {load.error.message}
        </p>
        <p>
          <a href="/">Back to the playground</a>
        </p>
      </main>
    );
  }
  let r: ReceiptView = {};
  try {
    r = JSON.parse(load.text) as ReceiptView;
  } catch {
    r = {};
  }
  return (
    <main id="main">
      <p>
        <a href="/">← Playground</a>
      </p>
      <h1>Receipt {id}</h1>
      {pastedResult ? (
        // One verdict on the page at a time: the pasted receipt's, below, until the stored one is asked for again.
        <p class="muted" id="stored-check-note">
          The check shown is the one of the receipt pasted below.{' '}
          <button type="button" class="link-button" onClick={() => setPastedResult(null)}>
            Show the stored receipt's check
          </button>
        </p>
      ) : (
        <CheckOutcome result={load.check} id="stored-check" />
      )}
      <dl class="facts">
        <dt>Result</dt>
        <dd>
          <span class={`badge ${r.result}`}>{r.result}</span>
          {r.summary?.blocking_checks?.length ? (
            <>
              {' '}
              blocking: {r.summary.blocking_checks.map((c) => <code key={c}>{c} </code>)}
            </>
          ) : null}
        </dd>
        <dt>Task</dt>
        <dd>
          <code>{r.task_id}</code>
        </dd>
        <dt>Agent</dt>
        <dd>{r.agent_id ? <a href={`/agents/${encodeURIComponent(r.agent_id)}`}>{r.agent_id}</a> : <span class="muted">none given</span>}</dd>
        <dt>Verified at</dt>
        <dd>{r.verified_at}</dd>
        <dt>Options</dt>
        <dd>
          enforce_rules {String(r.enforce_rules)}, strict_content_check {String(r.strict_content_check)}; verifier {r.verifier_version}
        </dd>
      </dl>
      <Scores schema={r.schema_compliance} integrity={r.integrity_checks} overall={r.overall} />
      <Hashes result={pastedResult ?? load.check} />
      <p>
        <a href={`/log/proof/${encodeURIComponent(id)}`}>Proof that this receipt is in the transparency log</a> (JSON: its index, an inclusion
        proof and the checkpoint).
      </p>
      <details>
        <summary>Raw receipt (exact bytes as stored)</summary>
        <pre class="raw" tabIndex={0}>{load.text}</pre>
      </details>

      <section aria-labelledby="paste-title">
        <h2 id="paste-title">Check a receipt</h2>
        <p>
          Paste any receipt of this service (the stored one is filled in) and, optionally, the request it answered. The check runs in this page with
          the keys of this service's agent card; nothing is sent anywhere.
        </p>
        <form
          class="editor"
          onSubmit={(e) => {
            e.preventDefault();
            setPastedResult(checkReceipt(pasted, load.card, request));
          }}
        >
          <div class="field">
            <label for="paste-receipt">Receipt (JSON)</label>
            <textarea id="paste-receipt" rows={10} spellcheck={false} value={pasted} onInput={(e) => setPasted((e.target as HTMLTextAreaElement).value)} />
          </div>
          <div class="field">
            <label for="paste-request">
              Request (JSON, optional: recomputes the hashes)
            </label>
            <textarea id="paste-request" rows={8} spellcheck={false} value={request} onInput={(e) => setRequest((e.target as HTMLTextAreaElement).value)} />
          </div>
          <button type="submit" id="check-pasted">
            Check
          </button>
        </form>
        <div aria-live="polite">{pastedResult ? <CheckOutcome result={pastedResult} id="pasted-check" /> : null}</div>
      </section>
    </main>
  );
}
