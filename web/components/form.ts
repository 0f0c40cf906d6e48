// Form helpers: an API 400 that names a field goes under that field; anything else becomes a form-level message.
import type { UseFormReturnType } from "@mantine/form";
import { errorField, errorMessage } from "../api/client";

/** Shows `err` on the form: under the named field when the form has it, else returns the message for an alert. */
export function applyApiError<T extends object>(form: UseFormReturnType<T>, err: unknown, fieldMap: Record<string, string> = {}): string | null {
  const f = errorField(err);
  if (f) {
    const field = fieldMap[f.field] ?? f.field;
    if (field in form.getValues()) {
      form.setFieldError(field as never, capitalise(f.message));
      return null;
    }
  }
  return errorMessage(err);
}

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
