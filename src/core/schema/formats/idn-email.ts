/** @module `idn-email` format: RFC 6531 mailbox (UTF-8 local part, IDNA2008 domain). */
export { isIdnEmail } from './email.js';
