/** @module `idn-hostname` format: IDNA2008 (RFC 5890–5893) internationalized host name. */
export { isIdnHostname } from './idna.js';
