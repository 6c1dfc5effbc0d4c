/**
 * Writing to stdout, waiting until the chunk is handed off (so a piped reader gets all of it before
 * the exit). A reader that goes away early (`reservoir list . | head`) ends the command at once and
 * quietly, with exit code 0, as `cat` or `grep` end when their reader leaves: the reader has all it
 * asked for, so there is nothing to report. Any other failure to write is reported on stderr and
 * exits 1.
 */
let watching = false;

function stdoutFailed(error: NodeJS.ErrnoException): never {
  if (error.code === 'EPIPE') process.exit(0);
  process.stderr.write(`reservoir: cannot write to standard output: ${error.message}\n`);
  process.exit(1);
}

export function write(chunk: string | Buffer): Promise<void> {
  if (!watching) {
    watching = true;
    process.stdout.on('error', stdoutFailed);
  }
  return new Promise((resolve) =>
    process.stdout.write(chunk, (error) => (error ? stdoutFailed(error) : resolve())),
  );
}
