/**
 * Request params a handler relies on, checked before the SDK's own schema so that a missing or
 * mistyped field is an invalid-params error (-32602, `invalid_argument`) that names the field —
 * not the SDK's default for a spec method, an internal error (-32603) whose message is the
 * validator's raw issue dump. The SDK's schema stays the authority on everything else: a request
 * these checks pass is validated by it as before, and should it still refuse one, the refusal is
 * answered -32602 too, with its first issue in words.
 *
 * Installed through the SDK's own hook for wrapping registered handlers (`_wrapHandler`), on every
 * server instance of both eras and both transports.
 */
import { ProtocolError, Server, type ServerContext } from '@modelcontextprotocol/server';
import { InvalidArgumentError } from '../core/errors.js';
import { silentLogger, type Logger } from '../core/log.js';
import { toProtocolError } from './errors.js';

interface FieldCheck {
  field: string;
  type: 'string' | 'object';
  required: boolean;
  /** What the field holds, for the message. */
  what: string;
}

const URI: FieldCheck = {
  field: 'uri',
  type: 'string',
  required: true,
  what: 'the resource URI, e.g. file:///srv/docs/guide.md',
};
const CURSOR: FieldCheck = {
  field: 'cursor',
  type: 'string',
  required: false,
  what: 'the nextCursor of a previous page',
};
const NAME: FieldCheck = { field: 'name', type: 'string', required: true, what: 'the name' };
const ARGUMENTS: FieldCheck = {
  field: 'arguments',
  type: 'object',
  required: false,
  what: 'an object of named arguments',
};

/** The fields each method's handler reads from `params`. */
export const PARAM_CHECKS: Readonly<Record<string, readonly FieldCheck[]>> = {
  'resources/read': [URI],
  'resources/subscribe': [URI],
  'resources/unsubscribe': [URI],
  'resources/list': [CURSOR],
  'resources/directory/read': [
    { ...URI, what: 'the directory URI, e.g. file:///srv/docs/ or skill://pdf-forms' },
    CURSOR,
  ],
  'skills/list': [CURSOR],
  'skills/get': [
    { ...URI, what: "the URI of a skill's SKILL.md, e.g. skill://pdf-forms/SKILL.md" },
  ],
  'resources/templates/list': [CURSOR],
  'prompts/list': [CURSOR],
  'tools/list': [CURSOR],
  'prompts/get': [{ ...NAME, what: 'the prompt name' }, ARGUMENTS],
  'tools/call': [{ ...NAME, what: 'the tool name' }, ARGUMENTS],
  'completion/complete': [
    {
      field: 'ref',
      type: 'object',
      required: true,
      what: 'what to complete: { type: "ref/resource", uri } or { type: "ref/prompt", name }',
    },
    {
      field: 'argument',
      type: 'object',
      required: true,
      what: 'the argument being completed: { name, value }',
    },
  ],
};

/** The InvalidArgumentError for `params` of `method`, or undefined when the fields it checks are well-typed. */
export function paramsProblem(method: string, params: unknown): InvalidArgumentError | undefined {
  const checks = PARAM_CHECKS[method];
  if (checks === undefined) return undefined;
  if (
    params !== undefined &&
    (params === null || typeof params !== 'object' || Array.isArray(params))
  ) {
    return new InvalidArgumentError(
      'params',
      `${method} takes an object of parameters, got ${describe(params)}`,
    );
  }
  const record = (params ?? {}) as Record<string, unknown>;
  for (const check of checks) {
    const value = record[check.field];
    if (value === undefined) {
      if (check.required)
        return new InvalidArgumentError(check.field, `required by ${method}: ${check.what}`);
      continue;
    }
    const ok =
      check.type === 'string'
        ? typeof value === 'string'
        : value !== null && typeof value === 'object' && !Array.isArray(value);
    if (!ok)
      return new InvalidArgumentError(
        check.field,
        `expected ${check.type === 'string' ? 'a string' : 'an object'} (${check.what}), got ${describe(value)}`,
      );
  }
  return undefined;
}

type Handler = (
  request: { method: string; params?: unknown },
  ctx: ServerContext,
) => Promise<unknown>;

/** The SDK server with request params checked as above before any handler (or the SDK's schema) sees them. */
export class CheckedServer extends Server {
  /** Set by the factory right after construction; the error mapping logs through it. */
  logger: Logger = silentLogger;

  protected override _wrapHandler(
    method: string,
    handler: Parameters<Server['_wrapHandler']>[1],
  ): ReturnType<Server['_wrapHandler']> {
    const inner = super._wrapHandler(method, handler) as unknown as Handler;
    const wrapped: Handler = async (request, ctx) => {
      const problem = paramsProblem(method, request.params);
      if (problem !== undefined) throw toProtocolError(problem, this.logger);
      if (PARAM_CHECKS[method] === undefined) return inner(request, ctx);
      try {
        return await inner(request, ctx);
      } catch (error) {
        // Handlers throw ProtocolErrors (mcp/guarded-call.ts); a plain Error here is the SDK's schema refusing the request.
        if (error instanceof ProtocolError || !(error instanceof Error)) throw error;
        throw toProtocolError(
          new InvalidArgumentError(
            'params',
            `${method} parameters do not match the protocol's schema: ${firstIssue(error.message)}`,
          ),
          this.logger,
        );
      }
    };
    return wrapped as unknown as ReturnType<Server['_wrapHandler']>;
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value;
}

/** The first issue of a validator's message (a JSON list of issues), in words; the message itself otherwise. */
function firstIssue(message: string): string {
  try {
    const issues = JSON.parse(message) as { path?: unknown[]; message?: string }[];
    const issue = issues[0];
    if (issue !== undefined && typeof issue.message === 'string') {
      const path = (issue.path ?? []).filter((p) => p !== 'params').join('.');
      return path === '' ? issue.message : `${path}: ${issue.message}`;
    }
  } catch {
    // not a JSON list of issues
  }
  return message.length > 200 ? `${message.slice(0, 200)}…` : message;
}
