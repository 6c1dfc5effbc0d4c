/** Writing to stdout, waiting until the chunk is handed off (so a piped reader gets all of it before the exit). */
export function write(chunk: string | Buffer): Promise<void> {
  return new Promise((resolve, reject) =>
    process.stdout.write(chunk, (error) => (error ? reject(error) : resolve())),
  );
}
