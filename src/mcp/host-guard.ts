/**
 * @module DNS-rebinding protection for the MCP endpoint: the Host header and, when
 * present, the Origin header must name an allowed HOSTNAME. Ports are ignored (a
 * proxy or a client may add or drop them); IPv6 brackets and case are normalised,
 * so `[::1]:8080`, `LOCALHOST` and `localhost:3000` compare as hostnames.
 */

/** `example.com:8080` → `example.com`; `[::1]:80` → `::1`. Null when malformed. */
export function hostnameOfHost(host: string | undefined): string | null {
  if (host === undefined) return null;
  const value = host.trim().toLowerCase();
  if (value === '' || /[\s/@?#\\]/.test(value)) return null;
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    if (end < 0) return null;
    const rest = value.slice(end + 1);
    if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return null;
    return value.slice(1, end);
  }
  const colon = value.indexOf(':');
  if (colon < 0) return stripDot(value);
  // A bare IPv6 address without brackets is not a valid Host; more than one colon means exactly that.
  if (value.indexOf(':', colon + 1) >= 0) return null;
  if (!/^\d{1,5}$/.test(value.slice(colon + 1))) return null;
  return stripDot(value.slice(0, colon));
}

function stripDot(name: string): string | null {
  const n = name.endsWith('.') ? name.slice(0, -1) : name;
  return n === '' ? null : n;
}

/** Hostname of an Origin header value; null for `null`, opaque or malformed origins. */
export function hostnameOfOrigin(origin: string): string | null {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  const name = url.hostname.toLowerCase();
  return stripDot(name.startsWith('[') && name.endsWith(']') ? name.slice(1, -1) : name);
}

/** Normalised allow-list: entries may be written as hostnames, `host:port`, `[v6]` or URLs. `*` allows any. */
export function normaliseAllowedHosts(entries: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const entry of entries) {
    const e = entry.trim();
    if (e === '*') {
      out.add('*');
      continue;
    }
    const name = /^[a-z][a-z0-9+.-]*:\/\//i.test(e)
      ? hostnameOfOrigin(e)
      : /^[0-9a-f:.]+$/i.test(e) && e.split(':').length > 2
        ? e.toLowerCase() // a bare IPv6 address such as ::1
        : hostnameOfHost(e);
    if (name !== null) out.add(name);
  }
  return out;
}

export type HostCheck = { ok: true } | { ok: false; reason: string };

export function checkHostAndOrigin(allowed: Set<string>, host: string | undefined, origin: string | undefined): HostCheck {
  if (allowed.has('*')) return { ok: true };
  const hostname = hostnameOfHost(host);
  if (hostname === null || !allowed.has(hostname)) return { ok: false, reason: 'Host header is not an allowed host name' };
  if (origin !== undefined) {
    const originName = hostnameOfOrigin(origin);
    if (originName === null || !allowed.has(originName)) return { ok: false, reason: 'Origin is not an allowed host name' };
  }
  return { ok: true };
}
