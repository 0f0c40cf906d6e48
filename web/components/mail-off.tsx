// Whether this server can send email (GET /api/status `features.mail`, supplement §27), and the note every email
// switch shows when it cannot: the setting is kept, but nothing is sent until the operator configures SMTP.
import { Text } from "@mantine/core";
import type { ReactNode } from "react";
import { useStatus } from "../features/users/users-api";

export const MAIL_OFF = "Mail is not configured on this server";

/** True once the status says mail is off (unknown while loading: no note rather than a wrong one). */
export function useMailOff(): boolean {
  const status = useStatus();
  return status.data !== undefined && !status.data.features.mail;
}

/** A switch's description: `normal`, or when mail is off the note saying nothing will be sent (read with the switch). */
export function MailDescription({ normal }: { normal: ReactNode }) {
  if (!useMailOff()) return <>{normal}</>;
  return (
    <>
      <Text span inherit fw={700} data-testid="mail-off">
        {MAIL_OFF}:
      </Text>{" "}
      the setting is kept, but no email is sent until the operator sets up SMTP.
    </>
  );
}
