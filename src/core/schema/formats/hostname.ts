/** @module `hostname` (RFC 1123, A-labels validated per IDNA2008) and `idn-hostname` (RFC 5890/5891) formats. */
export { isHostname, isIdnHostname } from './idna.js';
