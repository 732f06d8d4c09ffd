/**
 * @module The format registry: which `format` values are asserted per dialect.
 *
 * Asserted formats (anything else is unknown: it passes and is not counted):
 * - draft-07 (`http://json-schema.org/draft-07/schema#`): date-time, date, time, email,
 *   idn-email, hostname, idn-hostname, ipv4, ipv6, uri, uri-reference, iri, iri-reference,
 *   uri-template, json-pointer, relative-json-pointer, regex.
 * - 2019-09 and 2020-12: all of the above plus duration and uuid.
 *
 * One file per format, each exporting a pure `(value: string) => boolean`; formats that share
 * a grammar re-export from the file that implements it (idna.ts: host names and IDNA2008;
 * email.ts: mailboxes; uri.ts: RFC 3986/3987 references; json-pointer.ts: both pointer forms).
 */
import { isDate } from './date.js';
import { isDateTime } from './date-time.js';
import { isDuration } from './duration.js';
import { isEmail } from './email.js';
import { isHostname } from './hostname.js';
import { isIdnEmail } from './idn-email.js';
import { isIdnHostname } from './idn-hostname.js';
import { isIpv4 } from './ipv4.js';
import { isIpv6 } from './ipv6.js';
import { isIri } from './iri.js';
import { isIriReference } from './iri-reference.js';
import { isJsonPointer } from './json-pointer.js';
import { isRegex } from './regex.js';
import { isRelativeJsonPointer } from './relative-json-pointer.js';
import { isTime } from './time.js';
import { isUri } from './uri.js';
import { isUriReference } from './uri-reference.js';
import { isUriTemplate } from './uri-template.js';
import { isUuid } from './uuid.js';

export type FormatCheck = (value: string) => boolean;

export const DIALECT_2020_12 = 'https://json-schema.org/draft/2020-12/schema';
export const DIALECT_2019_09 = 'https://json-schema.org/draft/2019-09/schema';
export const DIALECT_DRAFT_07 = 'http://json-schema.org/draft-07/schema#';

const DRAFT_07_FORMATS: Readonly<Record<string, FormatCheck>> = {
  'date-time': isDateTime,
  date: isDate,
  time: isTime,
  email: isEmail,
  'idn-email': isIdnEmail,
  hostname: isHostname,
  'idn-hostname': isIdnHostname,
  ipv4: isIpv4,
  ipv6: isIpv6,
  uri: isUri,
  'uri-reference': isUriReference,
  iri: isIri,
  'iri-reference': isIriReference,
  'uri-template': isUriTemplate,
  'json-pointer': isJsonPointer,
  'relative-json-pointer': isRelativeJsonPointer,
  regex: isRegex,
};

const DRAFT_2019_FORMATS: Readonly<Record<string, FormatCheck>> = {
  ...DRAFT_07_FORMATS,
  duration: isDuration,
  uuid: isUuid,
};

const REGISTRY: ReadonlyMap<string, Readonly<Record<string, FormatCheck>>> = new Map([
  [DIALECT_2020_12, DRAFT_2019_FORMATS],
  [DIALECT_2019_09, DRAFT_2019_FORMATS],
  [DIALECT_DRAFT_07, DRAFT_07_FORMATS],
  // Meta-schema URIs are also written with/without an empty fragment.
  ['http://json-schema.org/draft-07/schema', DRAFT_07_FORMATS],
  [`${DIALECT_2020_12}#`, DRAFT_2019_FORMATS],
  [`${DIALECT_2019_09}#`, DRAFT_2019_FORMATS],
]);

/** The checker for `name` under `dialect` (a meta-schema URI), or undefined when not asserted (unknown formats pass). */
export function getFormat(name: string, dialect: string): FormatCheck | undefined {
  const table = REGISTRY.get(dialect);
  if (!table || !Object.hasOwn(table, name)) return undefined;
  return table[name];
}
