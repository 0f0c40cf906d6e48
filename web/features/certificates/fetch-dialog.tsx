// "Fetch from a live site" (supplement §12.5): the server connects to an HTTPS URL and returns the chain it was
// shown (leaf first); each certificate is read here (subject, issuer, validity, SANs, fingerprint) and the leaf
// becomes a new template in one click, mirroring its subject, key, validity and extensions.
import { Alert, Badge, Button, Card, Code, Group, Loader, Modal, Stack, Text, TextInput } from "@mantine/core";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ApiError, errorMessage } from "../../api/client";
import { formatDateTime } from "../../components/format";
import { notifySuccess } from "../../components/notify";
import { dropDoubledScheme } from "../../components/prefill";
import { navigateSaved } from "../../components/use-unsaved-guard";
import type { CertInfo } from "./cert-info";
import { templatesApi, TEMPLATES_KEY } from "./certificates-api";

interface Chain {
  url: string;
  pems: string[];
  certs: CertInfo[];
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}

function CertCard({ cert, index }: { cert: CertInfo; index: number }) {
  const now = new Date();
  const expired = cert.notAfter < now;
  const notYet = cert.notBefore > now;
  return (
    <Card withBorder padding="sm" radius="md" component="li" aria-label={index === 0 ? "Leaf certificate" : `Certificate ${index + 1} of the chain`}>
      <Stack gap={4}>
        <Group gap="xs" wrap="wrap">
          <Badge variant="light" tt="none" color={index === 0 ? "blue" : "gray"}>
            {index === 0 ? "Leaf" : cert.selfIssued ? "Root" : "Intermediate"}
          </Badge>
          {cert.isCa && (
            <Badge variant="light" tt="none" color="grape">
              CA
            </Badge>
          )}
          {expired && (
            <Badge variant="light" tt="none" color="red">
              Expired
            </Badge>
          )}
          {notYet && (
            <Badge variant="light" tt="none" color="orange">
              Not valid yet
            </Badge>
          )}
        </Group>
        <Text size="sm">
          <Text span fw={600}>
            Subject:
          </Text>{" "}
          <span className="mono">{cert.subject || "(empty)"}</span>
        </Text>
        <Text size="sm">
          <Text span fw={600}>
            Issuer:
          </Text>{" "}
          <span className="mono">{cert.issuer || "(empty)"}</span>
        </Text>
        <Text size="sm">
          <Text span fw={600}>
            Valid:
          </Text>{" "}
          {formatDateTime(cert.notBefore.getTime() / 1000)} to {formatDateTime(cert.notAfter.getTime() / 1000)}
        </Text>
        <Text size="sm">
          <Text span fw={600}>
            Key:
          </Text>{" "}
          {cert.keyAlgorithm} · {cert.signatureAlgorithm}
        </Text>
        <Text size="sm" style={{ overflowWrap: "anywhere" }}>
          <Text span fw={600}>
            SANs:
          </Text>{" "}
          {cert.sans.length ? <span className="mono">{cert.sans.map((s) => s.value).join(", ")}</span> : "none"}
        </Text>
        {cert.sha256 && (
          <Text size="xs" c="dimmed" className="mono" style={{ overflowWrap: "anywhere" }}>
            SHA-256 {cert.sha256}
          </Text>
        )}
      </Stack>
    </Card>
  );
}

export function FetchDialog({ onClose }: { onClose: () => void }) {
  const qc = useQueryClient();
  const [url, setUrl] = useState("https://");
  const [busy, setBusy] = useState(false);
  const [creating, setCreating] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [chain, setChain] = useState<Chain | null>(null);

  const fetchChain = async (e: React.FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setChain(null);
    try {
      const target = url.trim();
      const pems = await templatesApi.fetchChain(target);
      const { parseCertificate } = await import("./cert-info");
      setChain({ url: target, pems, certs: await Promise.all(pems.map((p) => parseCertificate(p))) });
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  const createFromLeaf = async () => {
    if (!chain) return;
    setCreating(true);
    setError(null);
    try {
      const { certificateToAttributes } = await import("./cert-info");
      const { attributes, notes } = await certificateToAttributes(chain.pems[0]!);
      const base = (attributes.commonName ?? hostOf(chain.url)).slice(0, 90);
      // A name already taken gets " (2)", " (3)"…: the click always ends with a template.
      for (let n = 1; ; n++) {
        const name = n === 1 ? base : `${base} (${n})`;
        try {
          const created = await templatesApi.create({ templateName: name, attributes, tagIds: [] });
          notifySuccess(`Template “${created.name}” created from ${hostOf(chain.url)}${notes.length ? ` (${notes.join("; ")})` : ""}`);
          await qc.invalidateQueries({ queryKey: [TEMPLATES_KEY] });
          onClose();
          navigateSaved(`/certificates/templates/${created.id}`);
          return;
        } catch (err) {
          if (!(err instanceof ApiError && err.code === "DUPLICATE_NAME") || n >= 20) throw err;
        }
      }
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setCreating(false);
    }
  };

  return (
    <Modal opened onClose={onClose} title="Fetch a certificate chain from a live site" size="xl" closeButtonProps={{ "aria-label": "Close" }}>
      <Stack>
        <form onSubmit={fetchChain} noValidate>
          <Group align="flex-end" wrap="nowrap" gap="xs">
            <TextInput
              label="HTTPS URL"
              description="Secbox connects to it and shows the certificates the server presents (not verified: inspection only)."
              value={url}
              onChange={(e) => setUrl(dropDoubledScheme(e.currentTarget.value))}
              style={{ flex: 1 }}
              data-autofocus
              styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
            />
            <Button type="submit" loading={busy}>
              Fetch
            </Button>
          </Group>
        </form>
        {error && (
          <Alert color="red" role="alert" title="Could not fetch">
            {error}
          </Alert>
        )}
        {busy && <Loader size="sm" aria-label="Fetching" />}
        {chain && (
          <>
            <Text size="sm">
              <Code>{hostOf(chain.url)}</Code> presented {chain.certs.length} certificate{chain.certs.length === 1 ? "" : "s"}, leaf first:
            </Text>
            <Stack component="ul" gap="xs" p={0} m={0} style={{ listStyle: "none" }} aria-label="Certificate chain">
              {chain.certs.map((c, i) => (
                <CertCard key={i} cert={c} index={i} />
              ))}
            </Stack>
            <Group justify="flex-end">
              <Button onClick={createFromLeaf} loading={creating}>
                Create template from the leaf
              </Button>
            </Group>
          </>
        )}
      </Stack>
    </Modal>
  );
}
