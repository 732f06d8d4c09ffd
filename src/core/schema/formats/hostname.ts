/** @module `hostname` format: RFC 1123 host name; labels starting `xn--` must be valid IDNA2008 A-labels. */
export { isHostname } from './idna.js';
