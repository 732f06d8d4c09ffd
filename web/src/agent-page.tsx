/**
 * @module `/agents/:agent_id`: an agent's reputation for a person — counts,
 * pass rate, results over time, the history in pages, and the trust score with
 * its inputs when it is free on this server, and the ERC-8004 validation
 * responses given on chain for its receipts when the server is a validator.
 * `test-` agents are examples: shown, never scored.
 */
import { useEffect, useState } from 'preact/hooks';
import { getJson, type ApiErrorBody, type Site } from './api.js';
import { ResultsChart, type ChartPoint } from './chart.js';
import { ColumnTable } from './column-table.js';
import type { HistoryEntry, Reputation } from 'agent-output-verifier/client';


/** One on-chain ERC-8004 validation response (GET /erc8004/agents/:agent_id/validations, present in validator mode only). */
interface OnChainValidation {
  verification_id: string | null;
  request_hash: string;
  response: number | null;
  transaction: string | null;
  block: number | null;
}

interface TrustScore {
  score: number;
  inputs?: Record<string, unknown>;
  scored_at?: string;
}

/** The chart shows at most this many of the newest verifications. */
const CHART_MAX = 1000;
const PAGE = 100;
const TABLE_PAGE = 20;

async function reputationPage(id: string, cursor: string | null) {
  const q = new URLSearchParams({ limit: String(PAGE) });
  if (cursor) q.set('cursor', cursor);
  return getJson<Reputation>(`/reputation/${encodeURIComponent(id)}?${q}`);
}

export function AgentPage({ id, site }: { id: string; site: Site }) {
  const isTest = id.startsWith('test-');
  const [rep, setRep] = useState<Reputation | null>(null);
  const [history, setHistory] = useState<HistoryEntry[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<ApiErrorBody | null>(null);
  const [score, setScore] = useState<TrustScore | ApiErrorBody | null>(null);
  const [page, setPage] = useState(0);
  const [validations, setValidations] = useState<OnChainValidation[]>([]);

  useEffect(() => {
    // Only in ERC-8004 validator mode (the route does not exist otherwise).
    if (!site.erc8004Enabled) return;
    void getJson<{ validations: OnChainValidation[] }>(`/erc8004/agents/${encodeURIComponent(id)}/validations`)
      .then((r) => setValidations(r.ok ? r.value.validations : []))
      .catch(() => setValidations([]));
  }, [id]);

  useEffect(() => {
    void (async () => {
      let first: Reputation | null = null;
      const all: HistoryEntry[] = [];
      let next: string | null = null;
      do {
        const r = await reputationPage(id, next);
        if (!r.ok) {
          if (!first) return setError(r.error);
          break;
        }
        if (!first) {
          first = r.value;
          // An agent nobody has named has no score to show (the service would score it 0).
          if (first.verifications > 0 && !isTest && !site.paymentsEnabled) {
            void getJson<TrustScore>(`/score/${encodeURIComponent(id)}`).then((s) => setScore(s.ok ? s.value : s.error));
          }
        }
        all.push(...r.value.history);
        next = r.value.next_cursor;
      } while (next && all.length < CHART_MAX);
      setRep(first);
      setHistory(all);
      setCursor(next);
    })().catch(() => setError({ code: 'network', message: 'The service could not be reached.', status: 0 }));
  }, [id]);

  if (rep && rep.verifications === 0) {
    // Agent ids are whatever callers write: an id with no verification names nothing on this service.
    return (
      <main id="main">
        <p>
          <a href="/">← Playground</a>
        </p>
        <h1 id="agent-not-found">No such agent</h1>
        <p>
          No verification on this service names the agent id <code>{id}</code>. An agent appears here once a verification request carries its{' '}
          <code>agent_id</code>.
        </p>
      </main>
    );
  }

  async function loadMore() {
    if (!cursor) return;
    const r = await reputationPage(id, cursor);
    if (!r.ok) return setError(r.error);
    setHistory((h) => [...h, ...r.value.history]);
    setCursor(r.value.next_cursor);
  }

  const pages = Math.max(1, Math.ceil(history.length / TABLE_PAGE));
  const shown = history.slice(page * TABLE_PAGE, (page + 1) * TABLE_PAGE);
  // History is newest first; the chart reads oldest first.
  const points: ChartPoint[] = history
    .slice(0, CHART_MAX)
    .map((h) => ({ verifiedAt: h.verified_at, overall: h.overall_ratio, pass: h.result === 'pass' }))
    .reverse();

  return (
    <main id="main">
      <p>
        <a href="/">← Playground</a>
      </p>
      <h1>
        Agent <code>{id}</code>
      </h1>
      {isTest ? (
        <p class="notice" id="test-agent-note">
          This is an example agent: ids starting with <code>test-</code> are recorded but never count in a trust score.
        </p>
      ) : null}
      <p class="muted">The agent id is a label the caller chose; it is not authenticated.</p>
      {error ? (
        <p class="error-text">
          <code>{error.code}</code>: {error.message}
        </p>
      ) : !rep ? (
        <p>Loading…</p>
      ) : (
        <>
          <dl class="facts" id="counts">
            <dt>Verifications</dt>
            <dd>{rep.verifications}</dd>
            <dt>Passes</dt>
            <dd>{rep.passes}</dd>
            <dt>Fails</dt>
            <dd>{rep.fails}</dd>
            <dt>Pass rate</dt>
            <dd id="pass-rate">{(rep.pass_rate * 100).toFixed(1)}%</dd>
            <dt>First seen</dt>
            <dd>{rep.first_seen ?? '—'}</dd>
            <dt>Last seen</dt>
            <dd>{rep.last_seen ?? '—'}</dd>
          </dl>
          {rep.log_checkpoint ? (
            <p class="muted" id="log-checkpoint">
              Computed from the transparency log at tree size {rep.log_checkpoint.tree_size} (root <code>{rep.log_checkpoint.root_hash}</code>):
              anyone can recompute it from <a href="/log/checkpoint">the log</a>.
            </p>
          ) : null}
          <section aria-labelledby="trust-title">
            <h2 id="trust-title">Trust score</h2>
            <TrustScoreView isTest={isTest} paid={site.paymentsEnabled} score={score} id={id} />
          </section>
          <section aria-labelledby="chart-title">
            <h2 id="chart-title">Results over time</h2>
            {history.length ? (
              <>
                <ResultsChart points={points} />
                {history.length < rep.verifications ? (
                  <p class="muted">The newest {history.length} of {rep.verifications} verifications.</p>
                ) : null}
              </>
            ) : (
              <p>No verifications recorded for this agent yet.</p>
            )}
          </section>
          {validations.length > 0 ? (
            <section aria-labelledby="erc8004-title">
              <h2 id="erc8004-title">On-chain validations (ERC-8004)</h2>
              <ColumnTable class="history" columns={['Block', 'Transaction', 'Response', 'Receipt']}>
                {validations.map((v) => (
                  <tr key={v.request_hash}>
                    <td>{v.block ?? '—'}</td>
                    <td>
                      <code>{v.transaction ?? '—'}</code>
                    </td>
                    <td>{v.response ?? '—'}</td>
                    <td>{v.verification_id ? <a href={`/receipts/${encodeURIComponent(v.verification_id)}`}>receipt</a> : '—'}</td>
                  </tr>
                ))}
              </ColumnTable>
            </section>
          ) : null}
          <section aria-labelledby="history-title">
            <h2 id="history-title">History</h2>
            <ColumnTable class="history" columns={['Verified at', 'Task', 'Result', 'Overall', 'Receipt']}>
              {shown.map((h) => (
                <tr key={h.verification_id}>
                  <td>{h.verified_at}</td>
                  <td>
                    <code>{h.task_id}</code>
                  </td>
                  <td>
                    <span class={`badge ${h.result}`}>{h.result}</span>
                  </td>
                  <td>{(h.overall_ratio * 100).toFixed(1)}%</td>
                  <td>
                    <a href={`/receipts/${encodeURIComponent(h.verification_id)}`}>receipt</a>
                  </td>
                </tr>
              ))}
            </ColumnTable>
            <nav class="pager" aria-label="History pages">
              <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>
                Newer
              </button>
              <span>
                Page {page + 1} of {pages}
              </span>
              <button
                type="button"
                disabled={page + 1 >= pages && !cursor}
                onClick={() => {
                  if (page + 1 >= pages) void loadMore().then(() => setPage(page + 1));
                  else setPage(page + 1);
                }}
              >
                Older
              </button>
            </nav>
          </section>
        </>
      )}
    </main>
  );
}

function TrustScoreView({ isTest, paid, score, id }: { isTest: boolean; paid: boolean; score: TrustScore | ApiErrorBody | null; id: string }) {
  if (isTest) return <p>Not scored: example agents never get a trust score.</p>;
  if (paid) {
    return (
      <p>
        The trust score is a paid call on this server: <code>GET /score/{id}</code> (x402).
      </p>
    );
  }
  if (!score) return <p>Loading…</p>;
  if ('code' in score) {
    return (
      <p class="error-text">
        <code>{score.code}</code>: {score.message}
      </p>
    );
  }
  return (
    <>
      <p class="score" id="trust-score">
        <strong>{score.score}</strong> / 100
      </p>
      {score.inputs ? (
        <div class="table-scroll">
          <table class="inputs">
            <caption>Inputs (a signed, deterministic function of the non-test history)</caption>
            <tbody>
              {Object.entries(score.inputs).map(([k, v]) => (
                <tr key={k}>
                  <th scope="row">
                    <code>{k}</code>
                  </th>
                  <td>
                      <code>{typeof v === 'object' ? JSON.stringify(v) : String(v)}</code>
                    </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}
