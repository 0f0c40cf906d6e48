import { notifications } from "@mantine/notifications";
import { errorMessage } from "../api/client";

export const notifySuccess = (message: string) => notifications.show({ message, color: "green" });

/** An API error as a toast: the API's own message (it names the field when there is one). */
export const notifyError = (err: unknown, title = "That did not work") =>
  notifications.show({ title, message: errorMessage(err), color: "red", autoClose: 8000 });
