/**
 * @module Distinct, valid Unicode property classes for tests of the property-table
 * limit: `\p{Script=…}`, `\p{Script_Extensions=…}`, `\p{sc=…}`, `\p{scx=…}`, General_Category
 * values in their three spellings, then binary properties, in that order.
 */

const SCRIPTS = [
  'Latin', 'Greek', 'Cyrillic', 'Armenian', 'Hebrew', 'Arabic', 'Syriac', 'Thaana', 'Devanagari', 'Bengali', 'Gurmukhi',
  'Gujarati', 'Oriya', 'Tamil', 'Telugu', 'Kannada', 'Malayalam', 'Sinhala', 'Thai', 'Lao', 'Tibetan', 'Myanmar', 'Georgian',
  'Hangul', 'Ethiopic', 'Cherokee', 'Canadian_Aboriginal', 'Ogham', 'Runic', 'Khmer', 'Mongolian', 'Hiragana', 'Katakana',
  'Bopomofo', 'Han', 'Yi', 'Old_Italic', 'Gothic', 'Deseret', 'Inherited', 'Tagalog', 'Hanunoo', 'Buhid', 'Tagbanwa', 'Limbu',
  'Tai_Le', 'Linear_B', 'Ugaritic', 'Shavian', 'Osmanya', 'Cypriot', 'Braille', 'Buginese', 'Coptic', 'New_Tai_Lue',
  'Glagolitic', 'Tifinagh', 'Syloti_Nagri', 'Old_Persian', 'Kharoshthi', 'Balinese', 'Cuneiform', 'Phoenician', 'Phags_Pa',
  'Nko', 'Sundanese', 'Lepcha', 'Ol_Chiki', 'Vai', 'Saurashtra', 'Kayah_Li', 'Rejang', 'Lycian', 'Carian', 'Lydian', 'Cham',
  'Tai_Tham', 'Tai_Viet', 'Avestan', 'Egyptian_Hieroglyphs', 'Samaritan', 'Lisu', 'Bamum', 'Javanese', 'Meetei_Mayek',
  'Imperial_Aramaic', 'Old_South_Arabian', 'Inscriptional_Parthian', 'Inscriptional_Pahlavi', 'Old_Turkic', 'Kaithi', 'Batak',
  'Brahmi', 'Mandaic', 'Chakma', 'Meroitic_Cursive', 'Meroitic_Hieroglyphs', 'Miao', 'Sharada', 'Sora_Sompeng', 'Takri', 'Common',
];
const CATEGORIES = [
  'L', 'Lu', 'Ll', 'Lt', 'Lm', 'Lo', 'LC', 'M', 'Mn', 'Mc', 'Me', 'N', 'Nd', 'Nl', 'No', 'P', 'Pc', 'Pd', 'Ps', 'Pe', 'Pi', 'Pf',
  'Po', 'S', 'Sm', 'Sc', 'Sk', 'So', 'Z', 'Zs', 'Zl', 'Zp', 'C', 'Cc', 'Cf', 'Cs', 'Co', 'Cn',
];
const BINARY = [
  'ASCII', 'ASCII_Hex_Digit', 'Alphabetic', 'Any', 'Assigned', 'Bidi_Control', 'Bidi_Mirrored', 'Case_Ignorable', 'Cased',
  'Dash', 'Default_Ignorable_Code_Point', 'Deprecated', 'Diacritic', 'Emoji', 'Emoji_Component', 'Emoji_Modifier',
  'Emoji_Modifier_Base', 'Emoji_Presentation', 'Extended_Pictographic', 'Extender', 'Grapheme_Base', 'Grapheme_Extend',
  'Hex_Digit', 'ID_Continue', 'ID_Start', 'Ideographic', 'Join_Control', 'Lowercase', 'Math', 'Pattern_Syntax',
  'Pattern_White_Space', 'Quotation_Mark', 'Radical', 'Regional_Indicator', 'Sentence_Terminal', 'Soft_Dotted',
  'Terminal_Punctuation', 'Unified_Ideograph', 'Uppercase', 'Variation_Selector', 'White_Space', 'XID_Continue', 'XID_Start',
];

function* spellings(): Generator<string> {
  for (const s of SCRIPTS) yield* [`Script=${s}`, `Script_Extensions=${s}`, `sc=${s}`];
  for (const s of SCRIPTS) yield `scx=${s}`;
  for (const c of CATEGORIES) yield* [`General_Category=${c}`, `gc=${c}`, c];
  yield* BINARY;
}

/** `count` distinct `\p{…}` classes (as pattern text) that V8 accepts under `u`. */
export function propertyClasses(count: number): string[] {
  const out: string[] = [];
  for (const body of spellings()) {
    if (out.length === count) break;
    const cls = `\\p{${body}}`;
    try {
      new RegExp(cls, 'u');
      out.push(cls);
    } catch {
      // not in this Node version's Unicode data
    }
  }
  if (out.length < count) throw new Error(`only ${out.length} property classes available`);
  return out;
}

/** The hostile pattern: `count` distinct property classes as alternatives (260 make 5.3 kB). */
export function propertyAlternation(count: number): string {
  return propertyClasses(count).join('|');
}
