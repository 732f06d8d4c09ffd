/**
 * @module What the pages know about their server (a meta tag the server
 * fills in) and the few same-origin calls they make. Every URL is relative to
 * the page's own origin: nothing is requested from anywhere else.
 */
export interface Site {
  serviceName: string;
  version: string;
  paymentsEnabled: boolean;
  freeAllowancePerDay: number;
  /** ERC-8004 validator mode (GET /erc8004/… exists). */
  erc8004Enabled: boolean;
}

export function readSite(): Site {
  const fallback: Site = { serviceName: 'agent-output-verifier', version: '', paymentsEnabled: false, freeAllowancePerDay: 0, erc8004Enabled: false };
  const content = document.querySelector('meta[name="aov-site"]')?.getAttribute('content');
  if (!content) return fallback;
  try {
    return { ...fallback, ...(JSON.parse(content) as Partial<Site>) };
  } catch {
    return fallback;
  }
}

/** The service's error shape (or what a page can say about a response that is not one). */
export interface ApiErrorBody {
  code: string;
  message: string;
  status: number;
  fields?: Array<{ field: string; problem: string; fix: string }>;
}

export interface TextResponse {
  status: number;
  text: string;
  headers: Headers;
}

export async function getText(url: string, init?: RequestInit): Promise<TextResponse> {
  const res = await fetch(url, { credentials: 'same-origin', ...init });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

export function errorFrom(res: TextResponse): ApiErrorBody {
  try {
    const body = JSON.parse(res.text) as Partial<ApiErrorBody>;
    if (typeof body.code === 'string' && typeof body.message === 'string') return { status: res.status, ...body } as ApiErrorBody;
  } catch {
    // not the error shape: described below
  }
  return { code: `http_${res.status}`, message: `The server answered ${res.status}.`, status: res.status };
}

export async function getJson<T>(url: string): Promise<{ ok: true; value: T } | { ok: false; error: ApiErrorBody }> {
  const res = await getText(url, { headers: { accept: 'application/json' } });
  if (res.status !== 200) return { ok: false, error: errorFrom(res) };
  try {
    return { ok: true, value: JSON.parse(res.text) as T };
  } catch {
    return { ok: false, error: { code: 'bad_response', message: 'The server sent something that is not JSON.', status: res.status } };
  }
}
