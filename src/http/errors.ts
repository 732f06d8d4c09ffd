/**
 * @module Turns anything thrown inside a request (ApiError, Fastify's own
 * parser/validation errors, bugs) into the one error body of docs/protocol.md#errors. Unknown
 * errors become a bare `internal_error`: no stack, no message, no caller input.
 */
import { ApiError, errorBody } from '../errors.js';
import type { ErrorBody, FieldProblem } from '../errors.js';

interface FastifyLikeError {
  code?: string;
  statusCode?: number;
  validation?: Array<{ instancePath?: string; keyword?: string; message?: string; params?: Record<string, unknown> }>;
  validationContext?: string;
}

function validationFields(err: FastifyLikeError): FieldProblem[] {
  const part = err.validationContext ?? 'request';
  return (err.validation ?? []).map((v) => {
    const missing = v.keyword === 'required' && typeof v.params?.missingProperty === 'string' ? `/${v.params.missingProperty}` : '';
    const extra = v.keyword === 'additionalProperties' && typeof v.params?.additionalProperty === 'string' ? `/${v.params.additionalProperty}` : '';
    const pointer = `${v.instancePath ?? ''}${missing}${extra}`;
    const field = `${part}${pointer.replace(/\//g, '.')}`;
    // Ajv messages describe the constraint ("must be <= 100"), never the value sent.
    return { field, problem: v.message ?? `fails ${v.keyword ?? 'validation'}`, fix: `send a ${part} value that ${v.message ?? 'is valid'}` };
  });
}

/** Map any error to [status, body]. `bodyLimit` is quoted in the 413 message. */
export function toErrorBody(error: unknown, bodyLimit: number): ErrorBody {
  if (error instanceof ApiError) return error.toBody();
  const e = (error ?? {}) as FastifyLikeError;
  if (e.validation) {
    return errorBody('invalid_request', { fields: validationFields(e) });
  }
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errorBody('payload_too_large', {
        message: `The request body is larger than the limit of ${bodyLimit} bytes.`,
        fields: [{ field: 'body', problem: `larger than ${bodyLimit} bytes`, fix: `send at most ${bodyLimit} bytes` }],
      });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return errorBody('unsupported_media_type');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errorBody('invalid_request', {
        message: 'The request body is empty.',
        fields: [{ field: 'body', problem: 'empty', fix: 'send a JSON object' }],
      });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return errorBody('invalid_request', {
        message: 'The request body is not valid JSON.',
        fields: [{ field: 'body', problem: 'not valid JSON', fix: 'send a valid JSON object' }],
      });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return errorBody('invalid_request', {
        message: 'Content-Length does not match the body.',
        fields: [{ field: 'Content-Length', problem: 'does not match the body', fix: 'send a correct Content-Length' }],
      });
    case 'FST_ERR_BAD_URL':
      return errorBody('not_found');
  }
  const status = typeof e.statusCode === 'number' ? e.statusCode : 500;
  if (status === 404) return errorBody('not_found');
  if (status === 405) return errorBody('method_not_allowed');
  if (status === 413) return errorBody('payload_too_large', { message: `The request body is larger than the limit of ${bodyLimit} bytes.` });
  if (status === 415) return errorBody('unsupported_media_type');
  if (status === 503) return errorBody('unavailable');
  if (status >= 400 && status < 500) {
    return errorBody('invalid_request', { message: 'The request is not valid.', fields: [] });
  }
  return errorBody('internal_error');
}
