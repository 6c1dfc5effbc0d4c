/**
 * `tasks/get`, `tasks/update` and `tasks/cancel` on the 2026-07-28 wire, answered as the tasks
 * extension (`io.modelcontextprotocol/tasks`, SEP-2663) says for a server that does not declare it.
 * A request whose client did not negotiate the extension is refused with
 * MissingRequiredClientCapability (-32021, HTTP 400, `data.requiredCapabilities.extensions` naming
 * it), as the extension requires of every server; one whose client did is asking about a task this
 * server never created (it creates none), which is invalid params (-32602) naming the task.
 *
 * In the 2025 era tasks are an experimental part of the core protocol, behind the server's `tasks`
 * capability; Reservoir does not declare it, and the SDK answers those methods -32601 there.
 */
import { ProtocolError, type Server } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { MissingClientCapabilityError } from '../core/input.js';
import { guarded, type Guard } from './guarded-call.js';
import { inputContext } from './input.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
export const TASK_METHODS = ['tasks/get', 'tasks/update', 'tasks/cancel'] as const;
const INVALID_PARAMS = -32602;

const params = z.looseObject({ taskId: z.string() });

export function installTaskRefusals(server: Server, guard: Guard): void {
  for (const method of TASK_METHODS) {
    server.setRequestHandler(method, { params }, (request, handlerCtx) =>
      guarded<Record<string, never>>(guard, handlerCtx, method, undefined, () => {
        const declared = inputContext(server, handlerCtx).clientCapabilities['extensions'];
        if (declared?.[TASKS_EXTENSION] === undefined)
          throw new MissingClientCapabilityError({ extensions: { [TASKS_EXTENSION]: {} } });
        throw new ProtocolError(
          INVALID_PARAMS,
          `Unknown task '${request.taskId}': this server runs no tasks`,
          { taskId: request.taskId },
        );
      }),
    );
  }
}
