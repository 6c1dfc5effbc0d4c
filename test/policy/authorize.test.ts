// Pins the authorize step: access control's decision for calls addressed by name (`tools/call`,
// `prompts/get`). A name the caller may not use is refused with the error an unknown name gets, the
// handler never runs, and the steps inside the slot (here the rate limit) charge it exactly as they
// charge any call, so a budget count cannot tell a denied name from a missing one.
import { describe, expect, it } from 'vitest';
import { AccessPolicy } from '../../src/core/access.js';
import { InvalidArgumentError, ReservoirError } from '../../src/core/errors.js';
import { LOCAL_PRINCIPAL, type Principal } from '../../src/core/principal.js';
import { Registry } from '../../src/core/registry.js';
import { authorizeStep } from '../../src/policy/authorize.js';
import {
  composePolicy,
  createRateLimiter,
  PolicyContext,
  rateLimitStep,
} from '../../src/policy/index.js';

const alice: Principal = { id: 'alice', kind: 'token', scopes: [] };

function registry(): Registry {
  return new Registry({
    access: new AccessPolicy({
      rules: [
        {
          principals: ['token:alice'],
          allow: ['tool:search', 'prompt:summary', 'file:///**'],
          deny: ['tool:drop_*', 'prompt:secret'],
        },
      ],
    }),
  });
}

function call(method: string, target: string, principal: Principal = alice): PolicyContext {
  return new PolicyContext({ principal, method, target, signal: new AbortController().signal });
}

async function outcome(run: Promise<unknown>): Promise<unknown> {
  return run.catch((error: unknown) => error);
}

describe('authorizeStep', () => {
  it('refuses a denied tool with the unknown-tool error, and never runs the handler', async () => {
    const policy = composePolicy([authorizeStep(registry().access)]);
    let ran = false;
    const refused = await outcome(
      policy(call('tools/call', 'drop_table'), async () => (ran = true)),
    );
    expect(refused).toBeInstanceOf(InvalidArgumentError);
    expect((refused as InvalidArgumentError).message).toContain("unknown tool 'drop_table'");
    expect(ran).toBe(false);
    // A tool no rule names is refused by the default (deny) the same way.
    expect(
      ((await outcome(policy(call('tools/call', 'other'), async () => 1))) as Error).message,
    ).toContain("unknown tool 'other'");
  });

  it('refuses a denied prompt with the no-such-prompt error', async () => {
    const policy = composePolicy([authorizeStep(registry().access)]);
    const refused = await outcome(policy(call('prompts/get', 'secret'), async () => 'rendered'));
    expect((refused as InvalidArgumentError).message).toContain("no prompt named 'secret'");
  });

  it('lets allowed names, the local user, other methods and servers without rules through', async () => {
    const policy = composePolicy([authorizeStep(registry().access)]);
    expect(await policy(call('tools/call', 'search'), async () => 'searched')).toBe('searched');
    expect(await policy(call('prompts/get', 'summary'), async () => 'rendered')).toBe('rendered');
    expect(await policy(call('tools/call', 'drop_table', LOCAL_PRINCIPAL), async () => 'ran')).toBe(
      'ran',
    );
    // Resources are judged by the Registry under the deadline (by the resource a URI names), not here.
    expect(
      await policy(call('resources/read', 'file:///denied/by/nothing/here'), async () => 'read'),
    ).toBe('read');
    const open = composePolicy([authorizeStep(new Registry().access)]);
    expect(await open(call('tools/call', 'drop_table'), async () => 'ran')).toBe('ran');
  });

  it('follows a reload of the rules', async () => {
    const served = registry();
    const policy = composePolicy([authorizeStep(served.access)]);
    served.setAccess(
      new AccessPolicy({ rules: [{ principals: ['token:alice'], allow: ['tool:*'] }] }),
    );
    expect(await policy(call('tools/call', 'drop_table'), async () => 'ran')).toBe('ran');
    served.setAccess(new AccessPolicy({ rules: [], default: 'deny' }));
    expect(
      ((await outcome(policy(call('tools/call', 'search'), async () => 1))) as Error).message,
    ).toContain("unknown tool 'search'");
  });

  it('charges a refused name to the rate limit exactly as an unknown one', async () => {
    // A burst of 2 and a window far longer than the test: no wall-clock race.
    const limiter = createRateLimiter({ requests: { perSecond: 0.01, burst: 2 } });
    const policy = composePolicy([rateLimitStep(limiter), authorizeStep(registry().access)]);
    // An allowed name the catalog does not hold: the handler refuses it. A denied one: the step does.
    const unknown = new InvalidArgumentError('name', "unknown tool 'search'");
    expect(await outcome(policy(call('tools/call', 'search'), () => Promise.reject(unknown)))).toBe(
      unknown,
    );
    const denied = await outcome(policy(call('tools/call', 'drop_table'), async () => 1));
    expect((denied as Error).message).toBe(
      new InvalidArgumentError('name', "unknown tool 'drop_table'").message,
    );
    // Both spent one request each: the third call is refused by the budget, whatever it names.
    const third = await outcome(policy(call('tools/call', 'drop_table'), async () => 1));
    expect(third).toBeInstanceOf(ReservoirError);
    expect((third as ReservoirError).data.kind).toBe('requests');
  });
});
