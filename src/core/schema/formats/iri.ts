/** @module `iri` format: RFC 3987 IRI. */
export { isIri } from './uri.js';
