// Reads a Dockerfile into its stages: the instructions test/deploy checks and scripts/replay-image.mjs
// replays. Only the subset the project's Dockerfile uses: `\` continuations, comments, JSON-array
// (exec form) or shell-form arguments; no parser directives, heredocs or build arguments.

/** `[{ op, args }]` with continuations joined and comments dropped. */
export function dockerInstructions(text) {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^([A-Z]+)\s+(.*)$/.exec(line);
      if (match === null) throw new Error(`not a Dockerfile instruction: ${line}`);
      return { op: match[1], args: match[2] };
    });
}

/** The stages, in order: `{ from, name, instructions }` (the FROM itself left out). */
export function dockerStages(instructions) {
  const stages = [];
  for (const instruction of instructions) {
    if (instruction.op === 'FROM') {
      const [from, as, name] = instruction.args.split(/\s+/);
      stages.push({ from, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else if (stages.length === 0) {
      throw new Error(`${instruction.op} before the first FROM`);
    } else {
      stages.at(-1).instructions.push(instruction);
    }
  }
  return stages;
}

/** An exec-form argument list (`["node", "x"]`), or a shell-form one run by `sh -c`. */
export function dockerCommand(args) {
  const text = args.trim();
  if (text.startsWith('[')) return JSON.parse(text);
  return ['/bin/sh', '-c', text];
}

/** `COPY [--from=stage] src… dest` as `{ from, sources, dest }`. */
export function dockerCopy(args) {
  const words = args.trim().split(/\s+/);
  let from;
  while (words[0]?.startsWith('--')) {
    const flag = words.shift();
    if (flag.startsWith('--from=')) from = flag.slice('--from='.length);
    else throw new Error(`COPY flag this replay does not know: ${flag}`);
  }
  if (words.length < 2) throw new Error(`COPY needs a source and a destination: ${args}`);
  return { from, sources: words.slice(0, -1), dest: words.at(-1) };
}

/** `ENV A=1 B=2` (or the old `ENV A 1`) as an object. */
export function dockerEnv(args) {
  const text = args.trim();
  if (!text.includes('=')) {
    const [name, ...rest] = text.split(/\s+/);
    return { [name]: rest.join(' ') };
  }
  return Object.fromEntries(
    text
      .split(/\s+/)
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
}
