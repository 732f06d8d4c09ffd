/**
 * @module `uri-template` format: RFC 6570 level 4 syntax. Reserved operators (`= , ! @ |`)
 * are rejected; an apostrophe is accepted in literals (RFC 6570 erratum 6937).
 */

const UCS_IPRIVATE = '\\u{a0}-\\u{d7ff}\\u{e000}-\\u{fdcf}\\u{fdf0}-\\u{ffef}\\u{10000}-\\u{10fffd}';
const LITERALS = new RegExp(`^(?:[\\x21\\x23-\\x24\\x26-\\x3b\\x3d\\x3f-\\x5b\\x5d\\x5f\\x61-\\x7a\\x7e${UCS_IPRIVATE}]|%[0-9A-Fa-f]{2})*$`, 'u');
const VARCHAR = '(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})';
const VARSPEC = `${VARCHAR}(?:\\.?${VARCHAR})*(?::[1-9][0-9]{0,3}|\\*)?`;
const EXPRESSION = new RegExp(`^[+#./;?&]?${VARSPEC}(?:,${VARSPEC})*$`);

export function isUriTemplate(value: string): boolean {
  let i = 0;
  while (i < value.length) {
    const open = value.indexOf('{', i);
    const literalEnd = open < 0 ? value.length : open;
    if (!LITERALS.test(value.slice(i, literalEnd))) return false;
    if (open < 0) return true;
    const close = value.indexOf('}', open);
    if (close < 0) return false;
    if (!EXPRESSION.test(value.slice(open + 1, close))) return false;
    i = close + 1;
  }
  return true;
}
