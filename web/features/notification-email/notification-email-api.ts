import { api, call } from "../../api/client";
import { notificationEmail as notificationRules } from "../../api/rules.gen";
import type { NotificationDestination } from "../../api/types";

export const NOTIFICATION_EMAIL_KEY = ["notification-email"] as const;

export const notificationEmailApi = {
  get: () => call(api.GET("/api/user/notification_email")) as Promise<NotificationDestination | null>,
  set: (email: string) => call(api.PUT("/api/user/notification_email", { body: { email } })),
  verify: (code: string) => call(api.POST("/api/user/notification_email/_verify", { body: { code } })),
  resend: () => call(api.POST("/api/user/notification_email/_resend")),
  remove: () => call(api.DELETE("/api/user/notification_email")),
};

/** Seconds between code emails, and the code's digits (supplement §10.2): the API's own rules. */
export const RESEND_COOLDOWN_SEC = notificationRules.SEND_COOLDOWN_SEC;
export const CODE_DIGITS = notificationRules.VERIFICATION_CODE_DIGITS;

export type { NotificationDestination };
