// Three instances behind a real HAProxy (Debian's package; .ci/run installs it), plain round robin,
// driven by the real SDK client in both eras.
import { afterEach, describe, expect, it } from 'vitest';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Cleanup, connectHttp, newClient } from '../helpers/clients.js';
import { afterMarker, Recorder, waitFor, watchUris } from '../subscriptions/harness.js';
import {
  Backend,
  MEM_ROOT,
  REDIS_URL,
  startMember,
  streamMarked,
  uniquePrefix,
} from './harness.js';
import { HAPROXY, startHaproxy } from './haproxy.js';

const cleanup = new Cleanup();
afterEach(() => cleanup.run());

describe.skipIf(REDIS_URL === undefined || HAPROXY === undefined)(
  'three instances behind HAProxy',
  () => {
    it('serves a 2025 session and a 2026 listen stream through round-robin HAProxy, each change heard once', async () => {
      const backend = new Backend();
      backend.values.set('row', 'v1');
      backend.values.set('marker', 'm1');
      const prefix = uniquePrefix();
      const urls: string[] = [];
      for (const name of ['A', 'B', 'C']) {
        const member = await startMember(name, prefix, backend);
        cleanup.add(() => member.close());
        urls.push(member.url);
      }
      const haproxy = await startHaproxy(urls);
      cleanup.add(() => haproxy.stop());
      const uri = `${MEM_ROOT}row`;
      const marker = `${MEM_ROOT}marker`;

      const transport = new StreamableHTTPClientTransport(new URL(haproxy.url));
      const legacy = newClient('2025');
      cleanup.add(() => legacy.close());
      await legacy.connect(transport);
      await streamMarked(prefix, transport.sessionId!);
      const modern = await connectHttp('2026', haproxy.url, cleanup);
      for (let i = 0; i < 6; i += 1)
        expect((await legacy.readResource({ uri })).contents[0]).toMatchObject({ text: 'v1' });
      const legacyEvents = new Recorder(legacy);
      const modernEvents = new Recorder(modern.client);
      await watchUris(legacy, '2025', [uri, marker]);
      await watchUris(modern.client, '2026', [uri, marker]);
      await waitFor(
        () => backend.pollers().length === 1 && backend.watches() === 2,
        'one instance to poll both watched rows',
      );
      backend.values.set('row', 'v2');
      await waitFor(
        () => legacyEvents.updates(uri) >= 1 && modernEvents.updates(uri) >= 1,
        'both clients to hear the change through HAProxy',
      );
      await afterMarker([legacyEvents, modernEvents], marker, () =>
        backend.values.set('marker', 'm2'),
      );
      expect(legacyEvents.updates(uri)).toBe(1);
      expect(modernEvents.updates(uri)).toBe(1);
      expect((await legacy.readResource({ uri })).contents[0]).toMatchObject({ text: 'v2' });
      await transport.terminateSession();
      expect(haproxy.downs(), 'no instance failed its /readyz health check').toEqual([]);
    });
  },
);
