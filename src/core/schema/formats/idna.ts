/**
 * @module IDNA2008 support shared by `hostname`, `idn-hostname`, `email` and `idn-email`:
 * Punycode (RFC 3492), code point classes (RFC 5892), label rules incl. the contextual
 * rules (RFC 5892 Appendix A) and the Bidi rule (RFC 5893).
 *
 * Node's `punycode` module is deprecated and `URL`/`domainToASCII` implement UTS #46
 * (a lenient mapping), not IDNA2008 validity, so this is written out here.
 *
 * Unicode properties come from the regex engine's own tables. Three properties are not
 * available as regex properties and are approximated (documented where used):
 * NFKC_Casefold stability (via `normalize('NFKC')` + `toLowerCase`), Canonical_Combining_Class
 * = Virama (a list of the virama code points), Bidi_Class and Joining_Type (by script/ranges).
 */

// ---------------------------------------------------------------------------
// Punycode (RFC 3492)

const BASE = 36;
const TMIN = 1;
const TMAX = 26;
const SKEW = 38;
const DAMP = 700;
const INITIAL_BIAS = 72;
const INITIAL_N = 128;

function adapt(delta: number, numPoints: number, firstTime: boolean): number {
  let d = firstTime ? Math.floor(delta / DAMP) : delta >> 1;
  d += Math.floor(d / numPoints);
  let k = 0;
  while (d > ((BASE - TMIN) * TMAX) >> 1) {
    d = Math.floor(d / (BASE - TMIN));
    k += BASE;
  }
  return k + Math.floor(((BASE - TMIN + 1) * d) / (d + SKEW));
}

function digitValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 22; // 0-9 → 26-35
  if (c >= 0x41 && c <= 0x5a) return c - 0x41;
  if (c >= 0x61 && c <= 0x7a) return c - 0x61;
  return BASE;
}

function digitChar(d: number): string {
  return String.fromCharCode(d < 26 ? d + 0x61 : d + 22);
}

/** Decodes a Punycode string into code points; undefined when it is not valid Punycode. */
function punycodeDecode(input: string): number[] | undefined {
  const out: number[] = [];
  let b = input.lastIndexOf('-');
  if (b < 0) b = 0;
  for (let j = 0; j < b; j++) {
    const c = input.charCodeAt(j);
    if (c >= 0x80) return undefined;
    out.push(c);
  }
  let n = INITIAL_N;
  let bias = INITIAL_BIAS;
  let i = 0;
  for (let idx = b > 0 ? b + 1 : 0; idx < input.length; ) {
    const oldi = i;
    let w = 1;
    for (let k = BASE; ; k += BASE) {
      if (idx >= input.length) return undefined;
      const digit = digitValue(input.charCodeAt(idx++));
      if (digit >= BASE) return undefined;
      i += digit * w;
      if (i > 0x7fffffff) return undefined;
      const t = k <= bias ? TMIN : k >= bias + TMAX ? TMAX : k - bias;
      if (digit < t) break;
      w *= BASE - t;
      if (w > 0x7fffffff) return undefined;
    }
    bias = adapt(i - oldi, out.length + 1, oldi === 0);
    n += Math.floor(i / (out.length + 1));
    i %= out.length + 1;
    if (n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff)) return undefined;
    out.splice(i, 0, n);
    i++;
  }
  return out;
}

/** Encodes code points as Punycode (without the `xn--` prefix). */
function punycodeEncode(cps: number[]): string {
  let out = '';
  for (const c of cps) if (c < 0x80) out += String.fromCharCode(c);
  const basic = out.length;
  let handled = basic;
  if (basic > 0) out += '-';
  let n = INITIAL_N;
  let delta = 0;
  let bias = INITIAL_BIAS;
  while (handled < cps.length) {
    let m = Infinity;
    for (const c of cps) if (c >= n && c < m) m = c;
    delta += (m - n) * (handled + 1);
    n = m;
    for (const c of cps) {
      if (c < n) delta++;
      if (c === n) {
        let q = delta;
        for (let k = BASE; ; k += BASE) {
          const t = k <= bias ? TMIN : k >= bias + TMAX ? TMAX : k - bias;
          if (q < t) break;
          out += digitChar(t + ((q - t) % (BASE - t)));
          q = Math.floor((q - t) / (BASE - t));
        }
        out += digitChar(q);
        bias = adapt(delta, handled + 1, handled === basic);
        delta = 0;
        handled++;
      }
    }
    delta++;
    n++;
  }
  return out;
}

// ---------------------------------------------------------------------------
// Code point classes (RFC 5892 §2–3)

export type IdnaClass = 'PVALID' | 'CONTEXTJ' | 'CONTEXTO' | 'DISALLOWED';

const EXCEPTIONS: ReadonlyMap<number, IdnaClass> = new Map<number, IdnaClass>([
  [0x00df, 'PVALID'], [0x03c2, 'PVALID'], [0x06fd, 'PVALID'], [0x06fe, 'PVALID'], [0x0f0b, 'PVALID'], [0x3007, 'PVALID'],
  [0x00b7, 'CONTEXTO'], [0x0375, 'CONTEXTO'], [0x05f3, 'CONTEXTO'], [0x05f4, 'CONTEXTO'], [0x30fb, 'CONTEXTO'],
  [0x0640, 'DISALLOWED'], [0x07fa, 'DISALLOWED'], [0x302e, 'DISALLOWED'], [0x302f, 'DISALLOWED'],
  [0x3031, 'DISALLOWED'], [0x3032, 'DISALLOWED'], [0x3033, 'DISALLOWED'], [0x3034, 'DISALLOWED'],
  [0x3035, 'DISALLOWED'], [0x303b, 'DISALLOWED'],
]);

const UNASSIGNED = /^\p{Cn}$/u;
const IGNORABLE = /^[\p{Default_Ignorable_Code_Point}\p{White_Space}\p{Noncharacter_Code_Point}]$/u;
const LETTER_DIGITS = /^[\p{Ll}\p{Lu}\p{Lo}\p{Nd}\p{Lm}\p{Mn}\p{Mc}]$/u;

function inIgnorableBlock(cp: number): boolean {
  return (cp >= 0x20d0 && cp <= 0x20ff) || (cp >= 0x1d100 && cp <= 0x1d24f);
}

function isOldHangulJamo(cp: number): boolean {
  return (cp >= 0x1100 && cp <= 0x11ff) || (cp >= 0xa960 && cp <= 0xa97f) || (cp >= 0xd7b0 && cp <= 0xd7ff);
}

/**
 * NFKC_Casefold(cp) != cp, approximated: NFKC normalisation plus lower-casing covers
 * compatibility characters and upper/title case; the few characters whose case fold differs
 * from their lower case (e.g. U+017F, Cherokee small letters) are not caught.
 */
function isUnstable(s: string): boolean {
  const nfkc = s.normalize('NFKC');
  return nfkc !== s || nfkc.toLowerCase().normalize('NFKC') !== s;
}

function idnaClass(cp: number): IdnaClass {
  const exception = EXCEPTIONS.get(cp);
  if (exception) return exception;
  if ((cp >= 0x0660 && cp <= 0x0669) || (cp >= 0x06f0 && cp <= 0x06f9)) return 'CONTEXTO';
  const s = String.fromCodePoint(cp);
  if (UNASSIGNED.test(s)) return 'DISALLOWED';
  if ((cp >= 0x61 && cp <= 0x7a) || (cp >= 0x30 && cp <= 0x39) || cp === 0x2d) return 'PVALID';
  if (cp === 0x200c || cp === 0x200d) return 'CONTEXTJ';
  if (isUnstable(s)) return 'DISALLOWED';
  if (IGNORABLE.test(s)) return 'DISALLOWED';
  if (inIgnorableBlock(cp) || isOldHangulJamo(cp)) return 'DISALLOWED';
  return LETTER_DIGITS.test(s) ? 'PVALID' : 'DISALLOWED';
}

// ---------------------------------------------------------------------------
// Contextual rules (RFC 5892 Appendix A)

/** Code points with Canonical_Combining_Class = Virama (9). */
const VIRAMA = new Set([
  0x094d, 0x09cd, 0x0a4d, 0x0acd, 0x0b4d, 0x0bcd, 0x0c4d, 0x0ccd, 0x0d3b, 0x0d3c, 0x0d4d, 0x0dca, 0x0e3a,
  0x0eba, 0x0f84, 0x1039, 0x103a, 0x1714, 0x1715, 0x1734, 0x17d2, 0x1a60, 0x1b44, 0x1baa, 0x1bab, 0x1bf2,
  0x1bf3, 0x2d7f, 0xa806, 0xa82c, 0xa8c4, 0xa953, 0xa9c0, 0xaaf6, 0xabed, 0x10a3f, 0x11046, 0x11070,
  0x1107f, 0x110b9, 0x11133, 0x11134, 0x111c0, 0x11235, 0x112ea, 0x1134d, 0x11442, 0x114c2, 0x115bf,
  0x1163f, 0x116b6, 0x1172b, 0x11839, 0x1193d, 0x1193e, 0x119e0, 0x11a34, 0x11a47, 0x11a99, 0x11c3f,
  0x11d44, 0x11d45, 0x11d97, 0x11f41, 0x11f42,
]);

const TRANSPARENT = /^[\p{Mn}\p{Me}\p{Cf}]$/u;
const JOINING_SCRIPT = /^[\p{Script=Arabic}\p{Script=Syriac}\p{Script=Nko}\p{Script=Mongolian}\p{Script=Mandaic}\p{Script=Manichaean}\p{Script=Psalter_Pahlavi}\p{Script=Adlam}\p{Script=Hanifi_Rohingya}\p{Script=Sogdian}\p{Script=Phags_Pa}]$/u;
const LETTER = /^\p{L}$/u;
/** Arabic letters that join only to the right (Joining_Type R); the other letters of joining scripts are treated as dual-joining. */
const RIGHT_JOINING = new Set([
  0x0622, 0x0623, 0x0624, 0x0625, 0x0627, 0x0629, 0x062f, 0x0630, 0x0631, 0x0632, 0x0648, 0x0671, 0x0672,
  0x0673, 0x0675, 0x0676, 0x0677, 0x0688, 0x0689, 0x068a, 0x068b, 0x068c, 0x068d, 0x068e, 0x068f, 0x0690,
  0x0691, 0x0692, 0x0693, 0x0694, 0x0695, 0x0696, 0x0697, 0x0698, 0x0699, 0x06c0, 0x06c3, 0x06c4, 0x06c5,
  0x06c6, 0x06c7, 0x06c8, 0x06c9, 0x06ca, 0x06cb, 0x06cd, 0x06cf, 0x06d2, 0x06d3, 0x06d5, 0x06ee, 0x06ef,
  0x0710, 0x0715, 0x0716, 0x0717, 0x0718, 0x0719, 0x071e, 0x0728, 0x072a, 0x072c, 0x072f, 0x074d,
]);

type JoiningType = 'D' | 'R' | 'T' | 'U';

function joiningType(cp: number): JoiningType {
  const s = String.fromCodePoint(cp);
  if (cp === 0x200c || cp === 0x200d) return 'U';
  if (TRANSPARENT.test(s)) return 'T';
  if (JOINING_SCRIPT.test(s) && LETTER.test(s)) return RIGHT_JOINING.has(cp) ? 'R' : 'D';
  return 'U';
}

const GREEK = /^\p{Script=Greek}$/u;
const HEBREW = /^\p{Script=Hebrew}$/u;
const KANA_HAN = /^[\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Han}]$/u;

function zwnjByJoining(cps: number[], i: number): boolean {
  let j = i - 1;
  while (j >= 0 && joiningType(cps[j]) === 'T') j--;
  if (j < 0 || joiningType(cps[j]) !== 'D') return false; // L or D; no Joining_Type L letters in this approximation
  let k = i + 1;
  while (k < cps.length && joiningType(cps[k]) === 'T') k++;
  if (k >= cps.length) return false;
  const right = joiningType(cps[k]);
  return right === 'R' || right === 'D';
}

function contextOk(cps: number[], i: number): boolean {
  const cp = cps[i];
  const prev = i > 0 ? cps[i - 1] : undefined;
  const next = i + 1 < cps.length ? cps[i + 1] : undefined;
  switch (cp) {
    case 0x200c:
      return (prev !== undefined && VIRAMA.has(prev)) || zwnjByJoining(cps, i);
    case 0x200d:
      return prev !== undefined && VIRAMA.has(prev);
    case 0x00b7:
      return prev === 0x6c && next === 0x6c;
    case 0x0375:
      return next !== undefined && GREEK.test(String.fromCodePoint(next));
    case 0x05f3:
    case 0x05f4:
      return prev !== undefined && HEBREW.test(String.fromCodePoint(prev));
    case 0x30fb:
      return cps.some((c) => c !== 0x30fb && KANA_HAN.test(String.fromCodePoint(c)));
    default:
      if (cp >= 0x0660 && cp <= 0x0669) return !cps.some((c) => c >= 0x06f0 && c <= 0x06f9);
      if (cp >= 0x06f0 && cp <= 0x06f9) return !cps.some((c) => c >= 0x0660 && c <= 0x0669);
      return false;
  }
}

// ---------------------------------------------------------------------------
// Bidi rule (RFC 5893 §2), with Bidi_Class approximated by ranges.

type BidiClass = 'L' | 'R' | 'AL' | 'AN' | 'EN' | 'ES' | 'CS' | 'ET' | 'ON' | 'BN' | 'NSM';

const MARK = /^[\p{Mn}\p{Me}]$/u;
const RTL_R = /^[\p{Script=Hebrew}\p{Script=Samaritan}\p{Script=Mandaic}\p{Script=Nko}\p{Script=Cypriot}\p{Script=Imperial_Aramaic}\p{Script=Phoenician}\p{Script=Kharoshthi}\p{Script=Avestan}\p{Script=Old_South_Arabian}\p{Script=Old_Turkic}\p{Script=Adlam}]$/u;
const RTL_AL = /^[\p{Script=Arabic}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Hanifi_Rohingya}\p{Script=Sogdian}]$/u;
const OTHER_NEUTRAL = /^[\p{P}\p{S}\p{Zs}]$/u;

function bidiClass(cp: number): BidiClass {
  if (cp >= 0x30 && cp <= 0x39) return 'EN';
  if ((cp >= 0x06f0 && cp <= 0x06f9) || cp === 0xb2 || cp === 0xb3 || cp === 0xb9 || (cp >= 0x2070 && cp <= 0x2089) || (cp >= 0xff10 && cp <= 0xff19)) return 'EN';
  if ((cp >= 0x0660 && cp <= 0x0669) || (cp >= 0x0600 && cp <= 0x0605) || cp === 0x066b || cp === 0x066c || cp === 0x06dd || cp === 0x08e2 || (cp >= 0x10e60 && cp <= 0x10e7e)) return 'AN';
  if (cp === 0x200c || cp === 0x200d) return 'BN';
  if (cp === 0x2d || cp === 0x2b) return 'ES';
  if (cp === 0x2c || cp === 0x2e || cp === 0x2f || cp === 0x3a) return 'CS';
  const s = String.fromCodePoint(cp);
  if (MARK.test(s)) return 'NSM';
  if (RTL_AL.test(s)) return 'AL';
  if (RTL_R.test(s)) return 'R';
  if (OTHER_NEUTRAL.test(s)) return 'ON';
  return 'L';
}

function isRtlLabel(cps: number[]): boolean {
  return cps.some((c) => {
    const b = bidiClass(c);
    return b === 'R' || b === 'AL' || b === 'AN';
  });
}

function bidiRuleOk(cps: number[]): boolean {
  if (cps.length === 0) return true;
  const classes = cps.map(bidiClass);
  const first = classes[0];
  let end = classes.length - 1;
  while (end > 0 && classes[end] === 'NSM') end--;
  const last = classes[end];
  if (first === 'R' || first === 'AL') {
    const allowed = new Set<BidiClass>(['R', 'AL', 'AN', 'EN', 'ES', 'CS', 'ET', 'ON', 'BN', 'NSM']);
    if (!classes.every((c) => allowed.has(c))) return false;
    if (!(last === 'R' || last === 'AL' || last === 'EN' || last === 'AN')) return false;
    return !(classes.includes('EN') && classes.includes('AN'));
  }
  if (first === 'L') {
    const allowed = new Set<BidiClass>(['L', 'EN', 'ES', 'CS', 'ET', 'ON', 'BN', 'NSM']);
    if (!classes.every((c) => allowed.has(c))) return false;
    return last === 'L' || last === 'EN';
  }
  return false;
}

// ---------------------------------------------------------------------------
// Labels and domains

const LDH_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const COMBINING_MARK = /^\p{M}$/u;

/** RFC 5891 §5.4 checks of a U-label given as code points (already known to contain non-LDH or to come from an A-label). */
function uLabelOk(cps: number[]): boolean {
  if (cps.length === 0) return false;
  if (cps[0] === 0x2d || cps[cps.length - 1] === 0x2d) return false;
  if (cps.length >= 4 && cps[2] === 0x2d && cps[3] === 0x2d) return false;
  if (COMBINING_MARK.test(String.fromCodePoint(cps[0]))) return false;
  for (let i = 0; i < cps.length; i++) {
    const cls = idnaClass(cps[i]);
    if (cls === 'DISALLOWED') return false;
    if ((cls === 'CONTEXTJ' || cls === 'CONTEXTO') && !contextOk(cps, i)) return false;
  }
  return true;
}

interface LabelInfo {
  /** Code points of the label in Unicode form. */
  cps: number[];
  /** Length of the ASCII (A-label or LDH) form. */
  asciiLength: number;
}

/** Validates one label; `allowUnicode` is false for `hostname`, where only LDH labels and A-labels may appear. */
function checkLabel(label: string, allowUnicode: boolean): LabelInfo | undefined {
  if (/^[\x00-\x7f]*$/.test(label)) {
    if (!LDH_LABEL.test(label)) return undefined;
    if (/^xn--/i.test(label)) {
      const cps = punycodeDecode(label.slice(4));
      if (!cps || cps.every((c) => c < 0x80)) return undefined;
      if (punycodeEncode(cps) !== label.slice(4).toLowerCase()) return undefined;
      if (!uLabelOk(cps)) return undefined;
      return { cps, asciiLength: label.length };
    }
    return { cps: [...label].map((c) => c.codePointAt(0)!), asciiLength: label.length };
  }
  if (!allowUnicode) return undefined;
  const cps = [...label].map((c) => c.codePointAt(0)!);
  // Every code point costs at least one octet of the A-label: longer labels cannot fit in 63
  // (and Punycode encoding is quadratic, so this also keeps huge inputs cheap).
  if (cps.length > 59) return undefined;
  if (!uLabelOk(cps)) return undefined;
  const asciiLength = 4 + punycodeEncode(cps).length;
  if (asciiLength > 63) return undefined;
  return { cps, asciiLength };
}

function checkDomain(labels: string[], allowUnicode: boolean): boolean {
  const infos: LabelInfo[] = [];
  for (const label of labels) {
    const info = checkLabel(label, allowUnicode);
    if (!info) return false;
    infos.push(info);
  }
  const total = infos.reduce((n, l) => n + l.asciiLength, 0) + infos.length - 1;
  if (total > 253) return false;
  if (infos.some((l) => isRtlLabel(l.cps))) return infos.every((l) => bidiRuleOk(l.cps));
  return true;
}

/** RFC 1123 host name; labels starting `xn--` must be valid A-labels (IDNA2008). No trailing dot. */
export function isHostname(value: string): boolean {
  if (value.length === 0 || value.length > 253) return false;
  return checkDomain(value.split('.'), false);
}

/** IDNA2008 internationalized host name; `.`, `。`, `．` and `｡` separate labels. */
export function isIdnHostname(value: string): boolean {
  if (value.length === 0) return false;
  return checkDomain(value.split(/[.\u3002\uff0e\uff61]/), true);
}
