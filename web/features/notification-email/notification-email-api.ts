import { api, call } from "../../api/client";
import type { NotificationDestination } from "../../api/types";

export const NOTIFICATION_EMAIL_KEY = ["notification-email"] as const;

export const notificationEmailApi = {
  get: () => call(api.GET("/api/user/notification_email")) as Promise<NotificationDestination | null>,
  set: (email: string) => call(api.PUT("/api/user/notification_email", { body: { email } })),
  verify: (code: string) => call(api.POST("/api/user/notification_email/_verify", { body: { code } })),
  resend: () => call(api.POST("/api/user/notification_email/_resend")),
  remove: () => call(api.DELETE("/api/user/notification_email")),
};

/** Seconds between code emails (supplement §10.2). */
export const RESEND_COOLDOWN_SEC = 60;

export type { NotificationDestination };
