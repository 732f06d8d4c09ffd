/**
 * @module `/`: what the service does, and a request editor that verifies
 * through the ordinary API (so it spends the visitor's free allowance like any
 * call) and shows the verdict for a person: result, blocking checks, failed
 * checks with their paths highlighted in the output, hints, scores, counts,
 * and the signed receipt.
 */
import { useMemo, useState } from 'preact/hooks';
import { errorFrom, getText, type ApiErrorBody, type Site } from './api.js';
import { EXAMPLES } from './examples.js';
import { JsonView, type Mark } from './json-view.js';
import { parseJsonText } from './receipt-check.js';
import { ColumnTable } from './column-table.js';
import { Scores, type Score } from './scores.js';

interface Fields {
  task_id: string;
  agent_id: string;
  schema: string;
  output: string;
  bounds: string;
  rules: string;
  enforce_rules: boolean;
  strict_content_check: boolean;
  /** On unless an example turns it off: a schema typo here is an error to fix, not a quiet pass. */
  strict_schema: boolean;
}

const pretty = (v: unknown) => (v === undefined || v === null ? '' : JSON.stringify(v, null, 2));

function fieldsOf(request: Record<string, unknown>): Fields {
  return {
    task_id: String(request.task_id ?? ''),
    agent_id: typeof request.agent_id === 'string' ? request.agent_id : '',
    schema: pretty(request.expected_schema),
    output: pretty(request.submitted_output),
    bounds: pretty(request.bounds),
    rules: pretty(request.rules),
    enforce_rules: request.enforce_rules === true,
    strict_content_check: request.strict_content_check === true,
    strict_schema: request.strict_schema !== false,
  };
}

type Parsed = { ok: true; value: unknown } | { ok: false; message: string; line: number; column: number } | { ok: true; empty: true };

function parseField(text: string, optional: boolean): Parsed {
  if (optional && text.trim() === '') return { ok: true, empty: true };
  const p = parseJsonText(text);
  return p.ok ? { ok: true, value: p.value } : p;
}

interface Receipt {
  summary: { result: 'pass' | 'fail'; blocking_checks: string[]; schema_warnings?: number };
  result: 'pass' | 'fail';
  verification_id: string;
  errors_detail?: Array<{ check: string; path: string; expected: string; found: string; message: string }>;
  errors_total?: number;
  errors_omitted?: number;
  flags?: Array<{ check: string; field: string; severity: string; detail: string }>;
  flags_total?: number;
  flags_omitted?: number;
  hints?: Array<{ source: string; check: string; path: string; expected: string; found: string; repair?: { certainty: string; note: string } }>;
  hints_total?: number;
  hints_omitted?: number;
  schema_compliance?: Score;
  integrity_checks?: Score;
  overall?: Score;
}

interface Outcome {
  status: number;
  allowance: { remaining: string | null; limit: string | null; resets: string | null };
  receiptText?: string;
  receipt?: Receipt;
  output?: unknown;
  error?: ApiErrorBody;
}

function JsonField(props: { id: string; label: string; hint?: string; value: string; optional?: boolean; rows: number; onInput(v: string): void }) {
  const parsed = parseField(props.value, props.optional === true);
  const errId = `${props.id}-error`;
  return (
    <div class="field">
      <label for={props.id}>
        {props.label}
        {props.hint ? <span class="muted"> {props.hint}</span> : null}
      </label>
      <textarea
        id={props.id}
        rows={props.rows}
        spellcheck={false}
        autocomplete="off"
        aria-invalid={!parsed.ok}
        aria-describedby={errId}
        value={props.value}
        onInput={(e) => props.onInput((e.target as HTMLTextAreaElement).value)}
      />
      <p id={errId} class={parsed.ok ? 'field-status ok' : 'field-status bad'} role={parsed.ok ? undefined : 'alert'}>
        {parsed.ok ? (('empty' in parsed) ? 'Empty (not sent).' : 'Valid JSON.') : `Line ${parsed.line}, column ${parsed.column}: ${parsed.message}`}
      </p>
    </div>
  );
}

/** The request body, with the JSON fields spliced in as typed (so duplicate keys or big integers reach the service as written). */
function requestBody(f: Fields): string | null {
  const parts = [`"task_id":${JSON.stringify(f.task_id)}`];
  if (f.agent_id.trim() !== '') parts.push(`"agent_id":${JSON.stringify(f.agent_id)}`);
  for (const [name, text, optional] of [
    ['expected_schema', f.schema, false],
    ['submitted_output', f.output, false],
    ['bounds', f.bounds, true],
    ['rules', f.rules, true],
  ] as const) {
    const p = parseField(text, optional);
    if (!p.ok) return null;
    if (!('empty' in p)) parts.push(`${JSON.stringify(name)}:${text.trim()}`);
  }
  parts.push(`"enforce_rules":${f.enforce_rules}`, `"strict_content_check":${f.strict_content_check}`, `"strict_schema":${f.strict_schema}`);
  return `{${parts.join(',')}}`;
}

export function Playground({ site }: { site: Site }) {
  const [exampleId, setExampleId] = useState(EXAMPLES[0].id);
  const [fields, setFields] = useState<Fields>(() => fieldsOf(EXAMPLES[0].request));
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const set = <K extends keyof Fields>(k: K, v: Fields[K]) => setFields((f) => ({ ...f, [k]: v }));
  const body = useMemo(() => requestBody(fields), [fields]);
  const origin = location.origin;

  async function verify() {
    if (body === null || busy) return;
    setBusy(true);
    try {
      const res = await getText('/verify/schema', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const allowance = {
        remaining: res.headers.get('Free-Allowance-Remaining'),
        limit: res.headers.get('Free-Allowance-Limit'),
        resets: res.headers.get('Free-Allowance-Resets'),
      };
      const output = (parseJsonText(fields.output) as { value?: unknown }).value;
      if (res.status === 200) {
        setOutcome({ status: 200, allowance, receiptText: res.text, receipt: JSON.parse(res.text) as Receipt, output });
      } else if (res.status === 402) {
        // x402: the free allowance is spent (or the body is over the free size); this page cannot pay.
        setOutcome({
          status: 402,
          allowance,
          error: { code: 'payment_required', message: 'This server charges for this verification (x402): the free allowance is used up or the request is over the free size. Use an x402 client, or try again after the allowance resets.', status: 402 },
        });
      } else {
        setOutcome({ status: res.status, allowance, error: errorFrom(res) });
      }
    } catch {
      setOutcome({ status: 0, allowance: { remaining: null, limit: null, resets: null }, error: { code: 'network', message: 'The service could not be reached.', status: 0 } });
    } finally {
      setBusy(false);
    }
  }

  return (
    <main id="main">
      <header class="intro">
        <h1>Agent Output Verifier</h1>
        <p class="lede">
          Checks the JSON an agent delivers — an invoice, a report, any structured output — against your JSON Schema, numeric bounds and
          cross-field rules before anyone pays for it. Every verdict comes with an Ed25519-signed receipt that anyone can check offline
          with the key this service publishes.
        </p>
        <nav aria-label="For developers and agents" class="links">
          <a href="/docs">API docs</a>
          <a href="/llms.txt">llms.txt</a>
          <a href="/.well-known/agent-card.json">Agent card (signing keys)</a>
          <a href="/openapi.json">OpenAPI</a>
        </nav>
      </header>

      <section aria-labelledby="try">
        <h2 id="try">Try it</h2>
        <form
          class="editor"
          onSubmit={(e) => {
            e.preventDefault();
            void verify();
          }}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
              e.preventDefault();
              void verify();
            }
          }}
        >
          <div class="row">
            <div class="field">
              <label for="example">Example</label>
              <select
                id="example"
                value={exampleId}
                onChange={(e) => {
                  const id = (e.target as HTMLSelectElement).value;
                  const ex = EXAMPLES.find((x) => x.id === id);
                  if (!ex) return;
                  setExampleId(id);
                  setFields(fieldsOf(ex.request));
                  setOutcome(null);
                }}
              >
                {EXAMPLES.map((x) => (
                  <option key={x.id} value={x.id}>
                    {x.title}
                  </option>
                ))}
              </select>
            </div>
            <div class="field">
              <label for="task_id">Task id</label>
              <input id="task_id" value={fields.task_id} onInput={(e) => set('task_id', (e.target as HTMLInputElement).value)} />
            </div>
            <div class="field">
              <label for="agent_id">
                Agent id <span class="muted">(optional; <code>test-</code> ids are examples)</span>
              </label>
              <input id="agent_id" value={fields.agent_id} onInput={(e) => set('agent_id', (e.target as HTMLInputElement).value)} />
            </div>
          </div>
          <div class="grid2">
            <JsonField id="schema" label="Expected schema" hint="(JSON Schema)" rows={18} value={fields.schema} onInput={(v) => set('schema', v)} />
            <JsonField id="output" label="Submitted output" hint="(the agent's JSON)" rows={18} value={fields.output} onInput={(v) => set('output', v)} />
            <JsonField id="rules" label="Rules" hint="(optional array)" optional rows={6} value={fields.rules} onInput={(v) => set('rules', v)} />
            <JsonField id="bounds" label="Bounds" hint="(optional object: path → {min, max})" optional rows={6} value={fields.bounds} onInput={(v) => set('bounds', v)} />
          </div>
          <div class="row checks">
            <label>
              <input type="checkbox" id="enforce_rules" checked={fields.enforce_rules} onChange={(e) => set('enforce_rules', (e.target as HTMLInputElement).checked)} />{' '}
              Enforce rules and bounds <span class="muted">(otherwise they are warnings)</span>
            </label>
            <label>
              <input
                type="checkbox"
                id="strict_content_check"
                checked={fields.strict_content_check}
                onChange={(e) => set('strict_content_check', (e.target as HTMLInputElement).checked)}
              />{' '}
              Strict content check <span class="muted">(undeclared fields, placeholders)</span>
            </label>
            <label>
              <input type="checkbox" id="strict_schema" checked={fields.strict_schema} onChange={(e) => set('strict_schema', (e.target as HTMLInputElement).checked)} />{' '}
              Strict schema <span class="muted">(an unknown keyword or format, e.g. a typo, is an error instead of a warning)</span>
            </label>
          </div>
          <div class="row">
            <button type="submit" id="verify" disabled={body === null || busy}>
              {busy ? 'Verifying…' : 'Verify'}
            </button>
            <span class="muted">
              {body === null ? 'Fix the JSON errors above first.' : 'Ctrl+Enter also verifies.'} Each verification counts against your free allowance
              {site.freeAllowancePerDay ? ` (${site.freeAllowancePerDay} per day)` : ''}.
            </span>
          </div>
        </form>
      </section>

      <div aria-live="polite">{outcome ? <Verdict outcome={outcome} /> : null}</div>

      <section aria-labelledby="connect">
        <h2 id="connect">Connect an agent</h2>
        <p>REST: <code>POST {origin}/verify/schema</code> with the request above as the JSON body. MCP (Streamable HTTP), tools <code>verify_schema</code> and <code>get_verification_record</code>:</p>
        <pre class="snippet" tabIndex={0}>
          {`claude mcp add --transport http verifier ${origin}/mcp\n{"mcpServers": {"verifier": {"url": "${origin}/mcp"}}}`}
        </pre>
        <p>
          Receipts: <code>GET /verifications/&lt;id&gt;</code>, shown for people at <code>/receipts/&lt;id&gt;</code>. An agent's history:{' '}
          <code>/agents/&lt;agent id&gt;</code>.
        </p>
      </section>
      <footer class="muted">
        {site.serviceName} {site.version}
      </footer>
    </main>
  );
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

function Allowance({ a }: { a: Outcome['allowance'] }) {
  if (a.remaining === null) return null;
  return (
    <p class="allowance" id="allowance">
      Free allowance: <strong>{a.remaining}</strong> of {a.limit} verifications left today (resets {a.resets}).
    </p>
  );
}

function Verdict({ outcome }: { outcome: Outcome }) {
  const { receipt, error } = outcome;
  if (error || !receipt) {
    const e = error ?? { code: 'unknown', message: 'No verdict.', status: outcome.status };
    return (
      <section class="verdict error" aria-labelledby="verdict-title" id="verdict">
        <h2 id="verdict-title">
          Not verified: <code>{e.code}</code>
        </h2>
        <p>{e.message}</p>
        {e.fields?.length ? (
          <ul>
            {e.fields.map((f, i) => (
              <li key={i}>
                <code>{f.field}</code>: {f.problem}. {f.fix}
              </li>
            ))}
          </ul>
        ) : null}
        <Allowance a={outcome.allowance} />
      </section>
    );
  }
  const failed: Array<{ check: string; path: string; severity: string; text: string }> = [
    ...(receipt.errors_detail ?? []).map((d) => ({ check: d.check, path: d.path, severity: 'error', text: `expected ${d.expected}, found ${d.found}` })),
    ...(receipt.flags ?? [])
      .filter((f) => f.severity !== 'error')
      .map((f) => ({ check: f.check, path: f.field.startsWith('$') ? f.field : `$.${f.field}`, severity: f.severity, text: f.detail })),
  ];
  const marks: Mark[] = failed.map((f) => ({ path: f.path, check: f.check }));
  const pass = receipt.result === 'pass';
  // A pass on a schema with unknown keywords or formats is not a plain pass: those checked nothing.
  const schemaWarnings = receipt.summary.schema_warnings ?? 0;
  const tone = pass && schemaWarnings > 0 ? 'warn' : receipt.result;
  return (
    <section class={`verdict ${tone}`} aria-labelledby="verdict-title" id="verdict" data-result={receipt.result} data-schema-warnings={schemaWarnings}>
      <h2 id="verdict-title">
        Result: <span class={`badge ${tone}`}>{pass ? (schemaWarnings > 0 ? `pass — ${plural(schemaWarnings, 'schema warning')}` : 'pass') : 'fail'}</span>
      </h2>
      {pass && schemaWarnings > 0 ? (
        <p id="schema-warnings">
          The schema has {schemaWarnings === 1 ? 'a keyword or format' : `${schemaWarnings} keywords or formats`} this verifier does not know (listed
          below as <code>schema:unknown_keyword</code> / <code>schema:unknown_format</code>). Each checks nothing, so part of what the schema
          seems to require was not checked. Fix the schema, or confirm the warnings are intended, before relying on this pass.
        </p>
      ) : pass ? (
        <p>Every blocking check passed. The seller can attach the receipt; the buyer can proceed to payment.</p>
      ) : (
        <p>
          Blocking checks:{' '}
          {receipt.summary.blocking_checks.map((c) => (
            <code key={c} class="blocking">
              {c}
            </code>
          ))}
        </p>
      )}
      <Scores schema={receipt.schema_compliance} integrity={receipt.integrity_checks} overall={receipt.overall} />
      <p class="muted counts">
        {plural(receipt.errors_total ?? 0, 'error')}{receipt.errors_omitted ? ` (${receipt.errors_omitted} not listed)` : ''}, {plural(receipt.flags_total ?? 0, 'flag')}
        {receipt.flags_omitted ? ` (${receipt.flags_omitted} not listed)` : ''}, {plural(receipt.hints_total ?? 0, 'hint')}
        {receipt.hints_omitted ? ` (${receipt.hints_omitted} not listed)` : ''}.
      </p>
      {failed.length ? (
        <>
          <h3>Failed checks</h3>
          <ColumnTable class="failed" columns={['Check', 'Path', 'Severity', 'What']}>
            {failed.map((f, i) => (
              <tr key={i} data-check={f.check}>
                <td>
                  <code>{f.check}</code>
                </td>
                <td>
                  <code>{f.path}</code>
                </td>
                <td>{f.severity}</td>
                <td>{f.text}</td>
              </tr>
            ))}
          </ColumnTable>
        </>
      ) : null}
      {receipt.hints?.length ? (
        <>
          <h3>Hints for a repair</h3>
          <ul class="hints">
            {receipt.hints.map((h, i) => (
              <li key={i}>
                <code>{h.path}</code> ({h.source}, <code>{h.check}</code>): expected {h.expected}; found {h.found}.
                {h.repair ? (
                  <span class="repair" data-certainty={h.repair.certainty}>
                    {' '}
                    {h.repair.certainty === 'determined' ? 'Fix' : 'Possible fixes'}: {h.repair.note}
                  </span>
                ) : null}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      {outcome.output !== undefined ? (
        <>
          <h3>The output{failed.length ? ', failed paths highlighted' : ''}</h3>
          <JsonView value={outcome.output} marks={marks} label="Submitted output with failed paths highlighted" />
        </>
      ) : null}
      <Allowance a={outcome.allowance} />
      <p>
        <a href={`/receipts/${encodeURIComponent(receipt.verification_id)}`} id="receipt-link">
          Open the signed receipt and check its signature
        </a>
      </p>
      <details>
        <summary>Signed receipt (raw JSON)</summary>
        <pre class="raw" tabIndex={0}>{outcome.receiptText}</pre>
      </details>
    </section>
  );
}
