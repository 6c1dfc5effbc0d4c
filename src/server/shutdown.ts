/**
 * The process's shutdown: the first SIGTERM or SIGINT (or, over stdio, the end of input) drains
 * the server — no new requests, the ones taken answered within the grace period, streams ended
 * cleanly, sources closed — and exits 0. A second signal exits at once, 128 + the signal's number
 * (130 for SIGINT, 143 for SIGTERM), as a shell reports a process killed by it. docs/operations.md.
 */
import type { Logger } from '../core/log.js';
import type { DrainOutcome } from './options.js';

/** Exit codes of the immediate exit on a second signal. */
export const SIGNAL_EXIT_CODES: Readonly<Record<string, number>> = { SIGINT: 130, SIGTERM: 143 };
export const SHUTDOWN_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

export interface ShutdownOptions {
  /** What drains: a Reservoir. */
  server: { drain(): Promise<DrainOutcome>; readonly shutdownGraceMs: number };
  logger: Logger;
  /** Runs as the drain starts (stop the config reloader, …). */
  onDrainStart?: () => void;
  /** @default process.exit */
  exit?: (code: number) => void;
}

export class Shutdown {
  private started: Promise<void> | undefined;
  private readonly exit: (code: number) => void;

  constructor(private readonly options: ShutdownOptions) {
    this.exit = options.exit ?? ((code) => process.exit(code));
  }

  /** Handles SIGINT and SIGTERM from now on: the first drains, a second exits at once. */
  install(): this {
    for (const signal of SHUTDOWN_SIGNALS) process.on(signal, this.onSignal);
    return this;
  }

  /** Whether a drain has begun. */
  get draining(): boolean {
    return this.started !== undefined;
  }

  /** Drains and exits 0; later calls (the end of stdin after a signal) join the first. */
  run(why: string): Promise<void> {
    return (this.started ??= this.drainAndExit(why));
  }

  private readonly onSignal = (signal: NodeJS.Signals): void => {
    if (this.started === undefined) {
      void this.run(signal);
      return;
    }
    const code = SIGNAL_EXIT_CODES[signal] ?? 1;
    this.options.logger.warn(
      { signal, code },
      `${signal} again while draining: exiting now, without waiting for the requests in flight`,
    );
    this.exit(code);
  };

  private async drainAndExit(why: string): Promise<void> {
    const { server, logger } = this.options;
    logger.info(
      { why, graceMs: server.shutdownGraceMs },
      'shutting down: draining (answering the requests in flight, taking no new ones)',
    );
    this.options.onDrainStart?.();
    let code = 0;
    try {
      const { unanswered } = await server.drain();
      if (unanswered === 0) logger.info({ why }, 'drained: every request taken was answered');
      else
        logger.warn(
          { why, unanswered, graceMs: server.shutdownGraceMs },
          'shut down with requests unanswered: the grace period ran out',
        );
    } catch (error) {
      logger.error({ err: error }, 'the drain failed; exiting');
      code = 1;
    }
    this.exit(code);
  }
}
