/** How many items a list page holds: the default, the most any caller may ask for, and the check. */
import { InvalidArgumentError } from './errors.js';

/** Largest page any caller may ask for. */
export const MAX_PAGE_SIZE = 10_000;
export const DEFAULT_PAGE_SIZE = 1000;

/** `value` when it is a whole number from 1 to MAX_PAGE_SIZE; otherwise InvalidArgumentError naming `name`. */
export function checkPageSize(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 1 || value > MAX_PAGE_SIZE) {
    throw new InvalidArgumentError(name, `must be a whole number from 1 to ${MAX_PAGE_SIZE}`, {
      value,
    });
  }
  return value;
}
