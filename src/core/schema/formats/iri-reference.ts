/** @module `iri-reference` format: RFC 3987 IRI-reference. */
export { isIriReference } from './uri.js';
