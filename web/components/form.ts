// Form helpers: an API 400 that names a field goes under that field; anything else becomes a form-level message.
import type { UseFormReturnType } from "@mantine/form";
import { errorField, errorMessage } from "../api/client";

/** API field → form field: a table, or a function (e.g. "settings.headers[2]" → "headers.2.name"); undefined = as named. */
export type FieldMap = Record<string, string> | ((apiField: string, message: string) => string | undefined);

/** Whether the form's values have `path` ("name", or nested "headers.2.name"). */
const hasPath = (values: object, path: string) => {
  let v: unknown = values;
  for (const key of path.split(".")) {
    if (v === null || typeof v !== "object" || !(key in v)) return false;
    v = (v as Record<string, unknown>)[key];
  }
  return true;
};

/** Shows `err` on the form: under the named field when the form has it, else returns the message for an alert. */
export function applyApiError<T extends object>(form: UseFormReturnType<T>, err: unknown, fieldMap: FieldMap = {}): string | null {
  const f = errorField(err);
  if (f) {
    const field = (typeof fieldMap === "function" ? fieldMap(f.field, f.message) : fieldMap[f.field]) ?? f.field;
    if (hasPath(form.getValues(), field)) {
      form.setFieldError(field as never, capitalise(f.message));
      return null;
    }
  }
  return errorMessage(err);
}

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
