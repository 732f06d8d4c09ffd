/** @module `uri-reference` format: RFC 3986 URI-reference. */
export { isUriReference } from './uri.js';
