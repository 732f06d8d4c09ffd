/**
 * @module The package version, as a literal: it is reported in every receipt
 * (verifier_version), the agent card and the MCP server info, and must not depend
 * on where package.json happens to sit at run time. A test keeps it equal to
 * package.json's version.
 */
export const VERSION = '0.1.0';
