// Runs s3rver (argv[2]: the directory to serve) on a free loopback port and prints {"port": N} on
// stdout; stops when stdin closes. Started with --openssl-legacy-provider: s3rver 3.7.1 seals its
// ListObjectsV2 continuation tokens with DES, which OpenSSL 3 (Node 17+) offers only there.
import S3rver from 's3rver';

const server = new S3rver({
  port: 0,
  address: '127.0.0.1',
  directory: process.argv[2],
  silent: true,
});
const { port } = await server.run();
process.stdout.write(`${JSON.stringify({ port })}\n`);
process.stdin.resume();
process.stdin.on('end', () => void server.close().finally(() => process.exit(0)));
