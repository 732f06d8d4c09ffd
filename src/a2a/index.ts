/**
 * @module A2A adapter: `POST /a2a`, the JSON-RPC
 * binding the agent card declares (A2A 1.0, method `SendMessage`; A2A 0.3
 * clients, which send no `A2A-Version` header, get `message/send`). A message
 * whose one data part is a verification request gets back a message whose data
 * part is the signed receipt — the same validation, allowance and receipt as
 * `POST /verify/schema`; a data part `{"agent_id": "..."}` gets the signed trust
 * score, as `GET /score/{agent_id}`. Errors are A2A errors whose `data` carries the
 * service's own error object.
 *
 * The SDK (@a2a-js/sdk) does the JSON-RPC work: validation, method dispatch,
 * version mapping, error codes. The service is stateless, so it answers with a
 * message, never a task: task methods and streaming are unsupported operations.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Role, type Message, type SendMessageRequest } from '@a2a-js/sdk';
import { A2AError, RequestMalformedError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { JsonRpcTransportHandler, ServerCallContext, validateVersion, type A2ARequestHandler } from '@a2a-js/sdk/server';
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server';
import { ApiError, isApiError, type ErrorBody } from '../errors.js';
import { parseStrictJson } from '../core/strict-json.js';
import type { A2aBackend, RefusalBody } from './backend.js';
import { dataPartSource, type DataPartSource } from './data-part.js';
import { A2A_PATH, a2aInterfaces } from './interface.js';

/** `@type` of the error detail that carries the service's error object in A2A 1.0 errors. */
const ERROR_DETAIL_TYPE = 'urn:json-schema-verifier:error';

export interface A2aRoutesOptions {
  /** Runs verifications and scores through the service's admission (validation, allowance, store). */
  backend: A2aBackend;
  clientKey(request: FastifyRequest): string;
  bodyLimit: number;
  /** Public base URL, for the payment resource and the declared interface. */
  baseUrl: string;
}


/** What the route hands to the request handler through the SDK's call context. */
interface CallState {
  located: DataPartSource;
  clientKey: string;
  /** Set by the handler when it refuses with a coded error, so the route can attach it. */
  error?: ErrorBody | RefusalBody;
}
const STATE_KEY = 'aov.a2a';

function callState(context: ServerCallContext): CallState {
  return context.state.get(STATE_KEY) as CallState;
}

/** Coded error → an A2A error (invalid params for request errors), remembering the error object for the response. */
function toA2aError(state: CallState, body: ErrorBody | RefusalBody): A2AError {
  state.error = body;
  const options = { message: body.message };
  return body.status >= 400 && body.status < 500 && body.status !== 429 && body.status !== 402 ? new RequestMalformedError(options) : new A2AError(options);
}

/** The agent id of a trust-score request (an object whose only member is a string `agent_id`), else null. */
function scoreRequest(source: string): string | null {
  // A verification request is usually large; only a short object can be {"agent_id": "..."}.
  if (source.length > 4096 || !source.trimStart().startsWith('{')) return null;
  let value: unknown;
  try {
    value = parseStrictJson(source).value;
  } catch {
    return null; // not valid: the verification path reports it
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const keys = Object.keys(value);
  const id = (value as Record<string, unknown>).agent_id;
  return keys.length === 1 && keys[0] === 'agent_id' && typeof id === 'string' ? id : null;
}

function createRequestHandler(options: A2aRoutesOptions): A2ARequestHandler {
  const { backend } = options;
  const unsupported = (what: string) => new UnsupportedOperationError({ message: `${what} is not supported: this agent answers each message with a signed receipt and keeps no tasks.` });

  async function sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message> {
    const state = callState(context);
    try {
      const { located } = state;
      if (!located.ok) {
        throw new ApiError('invalid_request', { fields: [{ field: 'params.message.parts', problem: located.problem, fix: 'Write each key once.' }] });
      }
      const sdkDataParts = (params.message?.parts ?? []).filter((p) => p.content?.$case === 'data').length;
      if (located.count !== 1 || sdkDataParts !== 1 || located.source === null) {
        throw new ApiError('invalid_request', {
          fields: [
            {
              field: 'params.message.parts',
              problem: `must hold exactly one data part, found ${Math.max(located.count, sdkDataParts)}`,
              fix: 'Send the verification request (the body of POST /verify/schema) as the data of one part: {"data": {...}, "mediaType": "application/json"}.',
            },
          ],
        });
      }
      // {"agent_id": "..."} alone asks for the trust score; anything else is a verification request.
      const agentId = scoreRequest(located.source);
      const client = { clientKey: state.clientKey };
      const answer = agentId !== null ? await backend.score(agentId, client) : await backend.verifyAndRecord(located.source, client);
      // The SDK answers a JSON-RPC error only for a thrown A2AError.
      if (!answer.ok) throw toA2aError(state, answer.error);
      const signedText = answer.text;
      return {
        messageId: randomUUID(),
        contextId: params.message?.contextId || randomUUID(),
        taskId: '',
        role: Role.ROLE_AGENT,
        parts: [{ content: { $case: 'data', value: JSON.parse(signedText) as unknown }, metadata: undefined, filename: '', mediaType: 'application/json' }],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      };
    } catch (e) {
      if (isApiError(e)) throw toA2aError(state, e.toBody());
      if (e instanceof A2AError) throw e;
      // A fault of the service: the coded 500, never its details.
      throw toA2aError(state, new ApiError('internal_error').toBody());
    }
  }

  return {
    // Used by the SDK only for the declared interfaces; the full card is GET /.well-known/agent-card.json.
    getAgentCard: async () => ({ supportedInterfaces: a2aInterfaces(options.baseUrl) }) as never,
    getAuthenticatedExtendedAgentCard: async () => {
      throw unsupported('The extended agent card');
    },
    sendMessage,
    // eslint-disable-next-line require-yield
    async *sendMessageStream() {
      throw unsupported('Streaming');
    },
    getTask: async (params) => {
      throw new TaskNotFoundError({ message: `No task ${params.id}: this agent keeps no tasks.` });
    },
    cancelTask: async (params) => {
      throw new TaskNotFoundError({ message: `No task ${params.id}: this agent keeps no tasks.` });
    },
    createTaskPushNotificationConfig: async () => {
      throw unsupported('Push notifications');
    },
    getTaskPushNotificationConfig: async () => {
      throw unsupported('Push notifications');
    },
    listTaskPushNotificationConfigs: async () => {
      throw unsupported('Push notifications');
    },
    deleteTaskPushNotificationConfig: async () => {
      throw unsupported('Push notifications');
    },
    // eslint-disable-next-line require-yield
    async *resubscribe() {
      throw unsupported('Resubscribing');
    },
    listTasks: async () => {
      throw unsupported('Listing tasks');
    },
  };
}

type JsonRpcResponse = { jsonrpc: '2.0'; id: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown } };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Registers POST /a2a. */
export async function a2aRoutes(app: FastifyInstance, options: A2aRoutesOptions): Promise<void> {
  const requestHandler = createRequestHandler(options);
  const current = new JsonRpcTransportHandler(requestHandler);
  const legacy = new LegacyJsonRpcTransportHandler(requestHandler);
  const declared = { supportedInterfaces: a2aInterfaces(options.baseUrl) };

  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // The verification request is parsed strictly from its own bytes, so the route needs the raw body.
    scope.addContentTypeParser(['application/json', 'application/a2a+json'], { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

    scope.post(
      A2A_PATH,
      {
        bodyLimit: options.bodyLimit,
        schema: {
          operationId: 'a2aJsonRpc',
          summary: 'A2A JSON-RPC: SendMessage (A2A 1.0) or message/send (A2A 0.3) with the verification request as a data part',
          tags: ['a2a'],
        },
      },
      async (request, reply) => {
        const version = String(request.headers['a2a-version'] ?? '').trim() || '0.3';
        const useLegacy = version === '0.3';
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        let text: string;
        try {
          text = utf8.decode(body);
        } catch {
          return reply.type('application/json').send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'The body is not valid UTF-8.' } });
        }
        let envelopeIsJson = true;
        try {
          JSON.parse(text);
        } catch {
          envelopeIsJson = false; // the SDK answers with its parse error
        }
        const state: CallState = {
          located: envelopeIsJson ? dataPartSource(text) : { ok: true, source: null, count: 0 },
          clientKey: options.clientKey(request),
        };
        const context = new ServerCallContext({ requestedVersion: version, state: new Map([[STATE_KEY, state]]) });
        let response: JsonRpcResponse;
        try {
          validateVersion(version, declared as never, 'JSONRPC');
          const out = await (useLegacy ? legacy : current).handle(text, context);
          if (typeof (out as AsyncGenerator)[Symbol.asyncIterator] === 'function') {
            // Streaming is declared off; the handler refuses it before a stream exists.
            throw new UnsupportedOperationError({ message: 'Streaming is not supported.' });
          }
          response = out as JsonRpcResponse;
        } catch (e) {
          const error = useLegacy ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(e) : JsonRpcTransportHandler.mapToJSONRPCError(e);
          response = { jsonrpc: '2.0', id: null, error: error as JsonRpcResponse['error'] };
        }
        if (response.error && state.error) {
          // The service's own error object travels with the A2A error: as the 0.3 `data`, or as a 1.0 error detail.
          const data = response.error.data;
          response.error.data = useLegacy ? state.error : [...(Array.isArray(data) ? data : []), { '@type': ERROR_DETAIL_TYPE, ...state.error }];
        }
        return reply.type('application/json').send(JSON.stringify(response));
      },
    );
  });
}
