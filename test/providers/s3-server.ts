/**
 * A real S3 API server for tests: s3rver, as a node child (see s3-server-child.mjs for why), on a
 * free loopback port, serving a temporary directory; and a bare AWS SDK client to fill it. s3rver stores objects as files, so keys with
 * an empty segment (`a//b`, `/lead`) cannot be stored by it (a limit of the test server, not of S3);
 * the URI encoding of such keys is held by unit tests.
 */
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';

const CHILD = fileURLToPath(new URL('./s3-server-child.mjs', import.meta.url));

export const S3_KEY = 'S3RVER';
export const S3_SECRET = 'S3RVER';

export class LocalS3 {
  private constructor(
    private readonly server: ChildProcess,
    private readonly dir: string,
    readonly endpoint: string,
    readonly client: S3Client,
  ) {}

  static async start(): Promise<LocalS3> {
    const dir = mkdtempSync(join(tmpdir(), 'reservoir-s3-'));
    const server = spawn(process.execPath, ['--openssl-legacy-provider', CHILD, dir], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const [line] = (await once(createInterface({ input: server.stdout! }), 'line')) as [string];
    const { port } = JSON.parse(line) as { port: number };
    const endpoint = `http://127.0.0.1:${port}`;
    const client = new S3Client({
      endpoint,
      forcePathStyle: true,
      region: 'us-east-1',
      credentials: { accessKeyId: S3_KEY, secretAccessKey: S3_SECRET },
    });
    return new LocalS3(server, dir, endpoint, client);
  }

  /** Options of an s3 source on this server. */
  source(bucket: string, extra: Record<string, unknown> = {}) {
    return {
      bucket,
      endpoint: this.endpoint,
      forcePathStyle: true,
      region: 'us-east-1',
      accessKeyId: S3_KEY,
      secretAccessKey: S3_SECRET,
      allowPrivateNetworks: true,
      ...extra,
    };
  }

  async bucket(name: string): Promise<void> {
    await this.client.send(new CreateBucketCommand({ Bucket: name }));
  }

  async put(bucket: string, key: string, body: string | Buffer): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
  }

  /** Puts many objects, `parallel` at a time. */
  async putMany(
    bucket: string,
    entries: readonly (readonly [string, string | Buffer])[],
    parallel = 16,
  ): Promise<void> {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < entries.length) {
        const [key, body] = entries[next++]!;
        await this.put(bucket, key, body);
      }
    };
    await Promise.all(Array.from({ length: parallel }, worker));
  }

  async remove(bucket: string, key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
  }

  /** Stops the server (its port then refuses connections). */
  async stop(): Promise<void> {
    if (this.server.exitCode !== null || this.server.signalCode !== null) return;
    const exited = once(this.server, 'exit');
    this.server.kill('SIGKILL');
    await exited;
  }

  /**
   * Stops the server and removes its directory. A bucket of 10,000 keys is tens of thousands of
   * files to s3rver: removing them took 41 s at load 30, so it is done without blocking the worker.
   */
  async close(): Promise<void> {
    this.client.destroy();
    await this.stop();
    await rm(this.dir, { recursive: true, force: true });
  }
}
