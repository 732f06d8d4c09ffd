/**
 * @module `uri`, `uri-reference` (RFC 3986) and `iri`, `iri-reference` (RFC 3987) formats.
 * The reference is split with RFC 3986 Appendix B and every component is checked against
 * its ABNF; IP literals reuse the `ipv6` check. An IPv4-looking host that is out of range is
 * still a valid reg-name, as RFC 3986 says.
 */
import { isIpv6 } from './ipv6.js';

const UNRESERVED = 'A-Za-z0-9\\-._~';
const SUB_DELIMS = "!$&'()*+,;=";
const PCT = '%[0-9A-Fa-f]{2}';
// RFC 3987 ucschar and iprivate.
const UCSCHAR = '\\u{a0}-\\u{d7ff}\\u{f900}-\\u{fdcf}\\u{fdf0}-\\u{ffef}\\u{10000}-\\u{1fffd}\\u{20000}-\\u{2fffd}\\u{30000}-\\u{3fffd}\\u{40000}-\\u{4fffd}\\u{50000}-\\u{5fffd}\\u{60000}-\\u{6fffd}\\u{70000}-\\u{7fffd}\\u{80000}-\\u{8fffd}\\u{90000}-\\u{9fffd}\\u{a0000}-\\u{afffd}\\u{b0000}-\\u{bfffd}\\u{c0000}-\\u{cfffd}\\u{d0000}-\\u{dfffd}\\u{e1000}-\\u{efffd}';
const IPRIVATE = '\\u{e000}-\\u{f8ff}\\u{f0000}-\\u{ffffd}\\u{100000}-\\u{10fffd}';

interface Grammar {
  scheme: RegExp;
  userinfo: RegExp;
  regName: RegExp;
  port: RegExp;
  path: RegExp;
  query: RegExp;
  fragment: RegExp;
  ipFuture: RegExp;
}

function grammar(iri: boolean): Grammar {
  const unreserved = iri ? UNRESERVED + UCSCHAR : UNRESERVED;
  const pchar = `(?:[${unreserved}${SUB_DELIMS}:@]|${PCT})`;
  const queryExtra = iri ? IPRIVATE : '';
  return {
    scheme: /^[A-Za-z][A-Za-z0-9+\-.]*$/,
    userinfo: new RegExp(`^(?:[${unreserved}${SUB_DELIMS}:]|${PCT})*$`, 'u'),
    regName: new RegExp(`^(?:[${unreserved}${SUB_DELIMS}]|${PCT})*$`, 'u'),
    port: /^[0-9]*$/,
    path: new RegExp(`^(?:${pchar}|/)*$`, 'u'),
    query: new RegExp(`^(?:${pchar}|[/?${queryExtra}])*$`, 'u'),
    fragment: new RegExp(`^(?:${pchar}|[/?])*$`, 'u'),
    ipFuture: new RegExp(`^[vV][0-9A-Fa-f]+\\.[${UNRESERVED}${SUB_DELIMS}:]+$`),
  };
}

const URI_GRAMMAR = grammar(false);
const IRI_GRAMMAR = grammar(true);
const APPENDIX_B = /^(?:([^:/?#]+):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/su;

function authorityOk(authority: string, g: Grammar): boolean {
  let rest = authority;
  const at = rest.indexOf('@');
  if (at >= 0) {
    if (!g.userinfo.test(rest.slice(0, at))) return false;
    rest = rest.slice(at + 1);
  }
  let host: string;
  let port = '';
  if (rest.startsWith('[')) {
    const close = rest.indexOf(']');
    if (close < 0) return false;
    host = rest.slice(0, close + 1);
    const after = rest.slice(close + 1);
    if (after !== '') {
      if (!after.startsWith(':')) return false;
      port = after.slice(1);
    }
    const inner = host.slice(1, -1);
    if (!isIpv6(inner) && !g.ipFuture.test(inner)) return false;
  } else {
    const colon = rest.indexOf(':');
    host = colon >= 0 ? rest.slice(0, colon) : rest;
    port = colon >= 0 ? rest.slice(colon + 1) : '';
    if (!g.regName.test(host)) return false;
  }
  return g.port.test(port);
}

function reference(value: string, g: Grammar, requireScheme: boolean): boolean {
  const m = APPENDIX_B.exec(value);
  if (!m) return false;
  const [, scheme, authority, path, query, fragment] = m;
  if (scheme !== undefined) {
    if (!g.scheme.test(scheme)) return false;
  } else {
    if (requireScheme) return false;
    // relative-ref: a first path segment containing ':' would read as a scheme (path-noscheme).
    if (authority === undefined && /^[^/]*:/.test(path)) return false;
  }
  if (authority !== undefined) {
    if (!authorityOk(authority, g)) return false;
  } else if (path.startsWith('//')) return false;
  if (!g.path.test(path)) return false;
  if (query !== undefined && !g.query.test(query)) return false;
  if (fragment !== undefined && !g.fragment.test(fragment)) return false;
  return true;
}

export function isUri(value: string): boolean {
  return reference(value, URI_GRAMMAR, true);
}

export function isUriReference(value: string): boolean {
  return reference(value, URI_GRAMMAR, false);
}

export function isIri(value: string): boolean {
  return reference(value, IRI_GRAMMAR, true);
}

export function isIriReference(value: string): boolean {
  return reference(value, IRI_GRAMMAR, false);
}
