// Copies a value to the clipboard and says so. Falls back to selecting a hidden textarea where the Clipboard API
// is unavailable (plain-http LAN addresses are not a secure context).
import { Button, type ButtonProps } from "@mantine/core";
import { notifications } from "@mantine/notifications";
import { useState } from "react";

export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {}
  const ta = document.createElement("textarea");
  ta.value = text;
  ta.setAttribute("readonly", "");
  ta.style.position = "fixed";
  ta.style.opacity = "0";
  document.body.appendChild(ta);
  ta.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch {}
  ta.remove();
  return ok;
}

export async function copyWithToast(text: string, what: string) {
  const ok = await copyText(text);
  notifications.show(
    ok
      ? { message: `${what} copied`, color: "green" }
      : { message: `Could not copy the ${what.toLowerCase()}; select it and copy by hand`, color: "red" },
  );
  return ok;
}

export function CopyButton({ value, label = "Copy", what = "Value", ...props }: { value: string; label?: string; what?: string } & ButtonProps) {
  const [copied, setCopied] = useState(false);
  return (
    <Button
      variant="default"
      size="xs"
      {...props}
      onClick={async () => {
        if (await copyWithToast(value, what)) {
          setCopied(true);
          setTimeout(() => setCopied(false), 1500);
        }
      }}
    >
      {copied ? "Copied" : label}
    </Button>
  );
}
