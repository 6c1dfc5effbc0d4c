/**
 * Section — Agent Skills over stdio (2025 era, thin client), on a catalog of 1,000 skills (each a
 * SKILL.md and a reference file):
 *   1. `skills/list` first page (100 skills) and `skills/get` of a random skill: p50/p99 latency;
 *   2. edit of a SKILL.md → `notifications/resources/updated` for a subscriber of it, and →
 *      `notifications/resources/list_changed` (edits spaced past the 1 s list-change interval).
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StdioRpc } from '../lib/stdio-client.mjs';
import { fmtInt, fmtMs, percentile, printTable } from '../lib/stats.mjs';

const SKILLS = 1000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const nameOf = (i) => `skill-${String(i).padStart(4, '0')}`;
const manifest = (name, description) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n# ${name}\n\nSee references/GUIDE.md.\n`;

function skillsTree(benchDir) {
  const root = join(benchDir, `skills-${SKILLS}`);
  let complete = false;
  try {
    complete = readdirSync(root).length === SKILLS;
  } catch {
    complete = false;
  }
  if (!complete) {
    rmSync(root, { recursive: true, force: true });
    for (let i = 0; i < SKILLS; i += 1) {
      const dir = join(root, nameOf(i));
      mkdirSync(join(dir, 'references'), { recursive: true });
      writeFileSync(join(dir, 'SKILL.md'), manifest(nameOf(i), `Skill number ${i}.`));
      writeFileSync(join(dir, 'references', 'GUIDE.md'), `# Guide ${i}\n${'text '.repeat(100)}\n`);
    }
  }
  return root;
}

async function timed(count, call) {
  const latencies = [];
  for (let i = 0; i < count; i += 1) {
    const t0 = performance.now();
    await call(i);
    latencies.push(performance.now() - t0);
  }
  return latencies;
}

async function notificationLatencies(rpc, path, uri, method, edits, spacingMs) {
  let arrived = [];
  rpc.onNotification = (message) => {
    if (
      message.method === method &&
      (method !== 'notifications/resources/updated' || message.params?.uri === uri)
    )
      arrived.push(performance.now());
  };
  const latencies = [];
  let missed = 0;
  for (let i = 0; i < edits; i += 1) {
    arrived = [];
    const t0 = performance.now();
    writeFileSync(path, manifest('skill-0500', `Edited ${method} ${i}.`));
    const deadline = t0 + 3000;
    while (arrived.length === 0 && performance.now() < deadline) await sleep(1);
    if (arrived.length === 0) missed += 1;
    else latencies.push(arrived[0] - t0);
    await sleep(spacingMs);
  }
  rpc.onNotification = undefined;
  return { latencies, missed };
}

export async function skillsSection(ctx) {
  const { paths, progress, target } = ctx;
  const root = skillsTree(paths.benchDir);
  progress(`skills: ${fmtInt(SKILLS)} skills ready`);
  const started = performance.now();
  const rpc = new StdioRpc(process.execPath, [
    paths.cli,
    'serve',
    '--skills',
    root,
    '--log-level',
    'warn',
  ]);
  try {
    await rpc.initialize();
    const ready = performance.now() - started;
    const first = await rpc.request('skills/list', {});
    if (first.skills.length !== 100 || first.nextCursor === undefined)
      throw new Error(`skills/list first page: ${first.skills.length} skills`);
    await timed(50, () => rpc.request('skills/list', {})); // warm-up
    const list = await timed(300, () => rpc.request('skills/list', {}));
    const get = await timed(500, (i) =>
      rpc.request('skills/get', { uri: `skill://${nameOf((i * 7919) % SKILLS)}/SKILL.md` }),
    );
    progress('skills: list/get measured; edits next');
    const uri = 'skill://skill-0500/SKILL.md';
    const path = join(root, 'skill-0500', 'SKILL.md');
    await rpc.request('resources/subscribe', { uri });
    const updated = await notificationLatencies(
      rpc,
      path,
      uri,
      'notifications/resources/updated',
      60,
      150,
    );
    const listChanged = await notificationLatencies(
      rpc,
      path,
      uri,
      'notifications/resources/list_changed',
      15,
      1100,
    );
    const row = (name, values, extra = '') => [
      name,
      fmtMs(percentile(values, 50)),
      fmtMs(percentile(values, 99)),
      extra,
    ];
    printTable(
      `Skills over stdio (2025 era), ${fmtInt(SKILLS)} skills; server ready (catalog built) in ${fmtMs(ready)}. The machine is shared (2 cores, other engineers' tests running): treat as indicative.`,
      ['measure', 'p50', 'p99', 'notes'],
      [
        row('skills/list first page (100 skills)', list, '300 calls'),
        row('skills/get', get, '500 calls'),
        row(
          'edit SKILL.md → resources/updated',
          updated.latencies,
          `60 edits, ${updated.missed} missed`,
        ),
        row(
          'edit SKILL.md → list_changed',
          listChanged.latencies,
          `15 edits 1.1 s apart, ${listChanged.missed} missed`,
        ),
      ],
    );
    target(
      'skills/list first page p99 ≤ 20 ms (1,000 skills)',
      fmtMs(percentile(list, 99)),
      percentile(list, 99) <= 20,
    );
    target(
      'skills/get p99 ≤ 10 ms (1,000 skills)',
      fmtMs(percentile(get, 99)),
      percentile(get, 99) <= 10,
    );
    target(
      'edit SKILL.md → notification p99 ≤ 100 ms',
      fmtMs(percentile(updated.latencies, 99)),
      updated.missed === 0 && percentile(updated.latencies, 99) <= 100,
    );
  } finally {
    rpc.close?.();
    rpc.child?.kill?.();
  }
}
