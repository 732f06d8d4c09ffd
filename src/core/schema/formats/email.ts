/**
 * @module `email` (RFC 5321 Mailbox) and `idn-email` (RFC 6531) formats: dot-string or
 * quoted-string local part (≤ 64 octets), then a host name or an IPv4/IPv6 address literal.
 */
import { isHostname, isIdnHostname } from './idna.js';
import { isIpv6 } from './ipv6.js';

const ATEXT = "A-Za-z0-9!#$%&'*+\\-/=?^_`{|}~";
const DOT_STRING = new RegExp(`^[${ATEXT}]+(?:\\.[${ATEXT}]+)*$`);
const QUOTED = /^"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\[\x20-\x7e])*"$/;
// RFC 6531: UTF8-non-ascii is allowed wherever atext and qtext are.
const DOT_STRING_I18N = new RegExp(`^[${ATEXT}\\u0080-\\u{10ffff}]+(?:\\.[${ATEXT}\\u0080-\\u{10ffff}]+)*$`, 'u');
const QUOTED_I18N = /^"(?:[\x20\x21\x23-\x5b\x5d-\x7e\u0080-\u{10ffff}]|\\[\x20-\x7e])*"$/u;

function utf8Length(s: string): number {
  return new TextEncoder().encode(s).length;
}

function splitMailbox(value: string): [string, string] | undefined {
  const at = value.lastIndexOf('@');
  if (at <= 0 || at === value.length - 1) return undefined;
  return [value.slice(0, at), value.slice(at + 1)];
}

function isAddressLiteral(domain: string): boolean {
  if (!domain.startsWith('[') || !domain.endsWith(']')) return false;
  const inner = domain.slice(1, -1);
  if (/^IPv6:/i.test(inner)) return isIpv6(inner.slice(5));
  return isIpv4Literal(inner);
}

/**
 * RFC 5321 IPv4-address-literal: `Snum 3("." Snum)`, `Snum = 1*3DIGIT` with a
 * value up to 255. Unlike the `ipv4` format, leading zeros are allowed (`[01.0.0.1]`).
 */
function isIpv4Literal(s: string): boolean {
  const parts = s.split('.');
  return parts.length === 4 && parts.every((p) => /^[0-9]{1,3}$/.test(p) && Number(p) <= 255);
}

function mailbox(value: string, i18n: boolean): boolean {
  const parts = splitMailbox(value);
  if (!parts) return false;
  const [local, domain] = parts;
  if (utf8Length(local) > 64) return false;
  const localOk = i18n ? DOT_STRING_I18N.test(local) || QUOTED_I18N.test(local) : DOT_STRING.test(local) || QUOTED.test(local);
  if (!localOk) return false;
  if (domain.startsWith('[')) return isAddressLiteral(domain);
  return i18n ? isIdnHostname(domain) : isHostname(domain);
}

export function isEmail(value: string): boolean {
  return mailbox(value, false);
}

export function isIdnEmail(value: string): boolean {
  return mailbox(value, true);
}
