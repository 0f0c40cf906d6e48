// Certificates (supplement §12): the facade the routes call. Private keys live in keys.ts, templates (with
// generation and sharing) in templates.ts; the remote chain fetch (§12.5) is here.
import type { Shares } from "../../platform/auth/share";
import { invalid } from "../../platform/core/errors";
import { OutboundError } from "../../platform/net/errors";
import { fetchPeerCertificates } from "../../platform/net/tls-chain";
import type { Runtime } from "../../platform/runtime";
import type { Work } from "../../platform/work/pool";
import type { TagsService } from "../tags/service";
import type { FetchChainInput } from "./contract";
import { PrivateKeys } from "./keys";
import { pkcsRunner } from "./tasks";
import { OpenSsl } from "./openssl";
import { CertificateTemplates } from "./templates";

export class CertificatesService {
  readonly openssl: OpenSsl;
  readonly keys: PrivateKeys;
  readonly templates: CertificateTemplates;

  constructor(
    private readonly rt: Runtime,
    tags: TagsService,
    shares: Shares,
    /** The work pool for PBKDF2 and PKCS#12 (absent: inline). */
    work?: Work,
  ) {
    this.openssl = new OpenSsl(rt.config.certificates.openssl);
    const pkcs = pkcsRunner(work);
    this.keys = new PrivateKeys(rt, tags, this.openssl, pkcs);
    this.templates = new CertificateTemplates(rt, tags, shares, this.openssl, pkcs);
  }

  /** `POST /api/certificates/_fetch`: the chain a remote HTTPS endpoint presents, PEM, leaf first (§12.5). */
  async fetchChain(body: FetchChainInput): Promise<string[]> {
    if (body.url === undefined || body.url === null) throw invalid("url: is required");
    if (typeof body.url !== "string") throw invalid("url: must be a string");
    try {
      return await fetchPeerCertificates({ url: body.url, allowPrivate: this.rt.config.network.allow_private_targets, timeoutMs: 10_000 });
    } catch (err) {
      if (!(err instanceof OutboundError)) throw err;
      if (err.code === "INVALID_URL") throw invalid(`url: ${err.message}`);
      if (err.code === "TARGET_NOT_ALLOWED") throw invalid(`url: ${err.message}`, "TARGET_NOT_ALLOWED");
      throw invalid(`url: ${err.message}`, "UPSTREAM_FAILED");
    }
  }
}
