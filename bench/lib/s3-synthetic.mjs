/**
 * A bucket of any size without storing it: an S3 API (ListObjectsV2 only, path-style) on a free
 * loopback port, whose keys `k/0000000.txt` … are made from their index, so a 1,000,000-object
 * bucket costs the server nothing to hold and each page O(page) to answer — what the S3 provider
 * meets on a real store, whose listing pages are O(page) too. Continuation tokens and StartAfter are
 * resolved by binary search over the generated keys; `prefix` and the '/' delimiter are honoured.
 *
 * Usage (a child of the bench): node s3-synthetic.mjs BUCKET COUNT → prints {"port": N}; stops when
 * stdin closes. Every other request answers 501, so a provider asking more than a listing shows up.
 */
import { createServer } from 'node:http';

const [bucket = 'bench-bucket', countArg = '1000000'] = process.argv.slice(2);
const count = Number(countArg);
const WIDTH = 7;
const keyAt = (i) => `k/${String(i).padStart(WIDTH, '0')}.txt`;
const MODIFIED = '2026-01-01T00:00:00.000Z';
const xmlEscape = (text) => text.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** The first index whose key sorts after `key` (S3 orders by UTF-8 bytes; these keys are ASCII). */
function firstAfter(key) {
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keyAt(mid) <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The first index whose key is at or after `key`. */
function firstAtOrAfter(key) {
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keyAt(mid) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function listObjects(query) {
  const prefix = query.get('prefix') ?? '';
  const delimiter = query.get('delimiter') ?? '';
  const maxKeys = Math.max(0, Math.min(1000, Number(query.get('max-keys') ?? 1000)));
  const token = query.get('continuation-token');
  const startAfter = query.get('start-after') ?? '';
  let start = firstAtOrAfter(prefix);
  if (token !== null) start = Math.max(start, Number(Buffer.from(token, 'base64url').toString()));
  else if (startAfter !== '') start = Math.max(start, firstAfter(startAfter));
  const parts = [];
  const commonPrefixes = [];
  let i = start;
  // Every key lives under `k/`: with the delimiter, a prefix above it shows `k/` as one common prefix.
  if (delimiter === '/' && prefix === '' && count > 0 && start < count) {
    commonPrefixes.push('k/');
    i = count;
  }
  for (; i < count && parts.length < maxKeys; i += 1) {
    const key = keyAt(i);
    if (!key.startsWith(prefix)) {
      i = count;
      break;
    }
    parts.push(
      `<Contents><Key>${xmlEscape(key)}</Key><LastModified>${MODIFIED}</LastModified><ETag>&quot;${((i * 2654435761) >>> 0).toString(16).padStart(8, '0')}&quot;</ETag><Size>256</Size><StorageClass>STANDARD</StorageClass></Contents>`,
    );
  }
  const truncated = i < count && keyAt(i).startsWith(prefix);
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' +
    `<Name>${bucket}</Name><Prefix>${xmlEscape(prefix)}</Prefix><MaxKeys>${maxKeys}</MaxKeys>` +
    `<KeyCount>${parts.length + commonPrefixes.length}</KeyCount><IsTruncated>${truncated}</IsTruncated>` +
    (truncated
      ? `<NextContinuationToken>${Buffer.from(String(i)).toString('base64url')}</NextContinuationToken>`
      : '') +
    (delimiter === '' ? '' : `<Delimiter>${xmlEscape(delimiter)}</Delimiter>`) +
    parts.join('') +
    commonPrefixes.map((p) => `<CommonPrefixes><Prefix>${p}</Prefix></CommonPrefixes>`).join('') +
    '</ListBucketResult>'
  );
}

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://localhost');
  req.resume();
  const path = url.pathname.replace(/\/$/, '');
  if (req.method === 'GET' && path === `/${bucket}` && url.searchParams.get('list-type') === '2') {
    const body = listObjects(url.searchParams);
    res.writeHead(200, {
      'content-type': 'application/xml',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
    return;
  }
  process.stderr.write(`s3-synthetic: not implemented: ${req.method} ${req.url}\n`);
  res.writeHead(501, { 'content-type': 'application/xml' });
  res.end(
    '<?xml version="1.0" encoding="UTF-8"?><Error><Code>NotImplemented</Code><Message>synthetic bucket: listing only</Message></Error>',
  );
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
process.stdin.resume();
process.stdin.on('end', () => server.close(() => process.exit(0)));
