/**
 * @module Where and how the A2A endpoint is reached, shared by the endpoint and
 * the agent card that declares it (kept apart from the endpoint so the card does
 * not load the A2A SDK).
 */

/** The JSON-RPC endpoint's path. */
export const A2A_PATH = '/a2a';
/** The A2A versions the endpoint speaks: 1.0 natively (`SendMessage`), 0.3 through the SDK's compatibility layer (`message/send`). */
const A2A_VERSIONS = ['1.0', '0.3'] as const;

/** The interfaces the agent card declares for this endpoint (the endpoint checks requested versions against them). */
export function a2aInterfaces(baseUrl: string): Array<{ url: string; protocolBinding: 'JSONRPC'; protocolVersion: string }> {
  return A2A_VERSIONS.map((v) => ({ url: `${baseUrl}${A2A_PATH}`, protocolBinding: 'JSONRPC', protocolVersion: v }));
}
