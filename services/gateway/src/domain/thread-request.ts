import { ValidationError } from "@steward/platform";
import { codePointLength } from "./run-request";

export const TITLE_MAX_CHARS = 200;

/** One line of text: no control characters (C0, DEL, C1), so a title shows as it was typed. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Content rules of a thread's title (docs/threads.md): the shape is already checked; these are 422/10430. */
export function checkThreadTitle(title: string | undefined): void {
  if (title === undefined) return;
  const n = codePointLength(title);
  if (n < 1 || n > TITLE_MAX_CHARS) throw new ValidationError(`title must be 1 to ${TITLE_MAX_CHARS} characters`);
  if (title.trim().length === 0) throw new ValidationError("title must not be only white space");
  if (CONTROL.test(title)) throw new ValidationError("title must not hold control characters");
}

/** Content rules of a fork (docs/threads.md "Fork"): its title is a new thread's. Whether `at_run_id` fits is the thread's to say. */
export function checkForkRequest(body: { at_run_id: string; title?: string }): void {
  checkThreadTitle(body.title);
}
