// `secbox serve`: migrate, then serve the API, responders, scheduler and mail sender.
import { createApp, createServices, listen, startBackground, stopBackground } from "../app";
import { checkSite } from "../config/site";
import { responderBaseUrl } from "../features/responders/service";
import { openRuntime } from "../platform/boot";
import { warmUi } from "../platform/ui/serve";
import { configFrom, parseFlags, type Command } from "./common";

const SHUTDOWN_SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

export const serveCommand: Command = {
  name: "serve",
  summary: "run the server",
  usage: "secbox serve [--config FILE] [--data-dir DIR] [--host HOST] [--port PORT]",
  async run(argv) {
    const { values } = parseFlags(argv, { host: { type: "string" }, port: { type: "string" } });
    if (values.help) {
      process.stdout.write(`${this.usage}\n`);
      return 0;
    }
    const config = configFrom(values);
    // Signals are taken from the start: one that comes while the server starts (the status answers as soon as it
    // listens; on PostgreSQL the background start takes longer) stops it cleanly once it has started, instead of
    // the signal's default action (exit 143 with captures unwritten).
    let requested: NodeJS.Signals | null = null;
    let onSignal = (signal: NodeJS.Signals) => void (requested ??= signal);
    for (const signal of SHUTDOWN_SIGNALS) process.on(signal, () => onSignal(signal));
    // The domain requirement (supplement §28): same site with the responders refuses http (exit 2), warns on https.
    const siteWarning = checkSite(config);
    const rt = await openRuntime(config);
    if (siteWarning) rt.log.warn(siteWarning);
    const services = createServices(rt);
    // CLI commands on this data (`users recover`, `users add`) then print links to where this server answers.
    await services.status.rememberPublicUrl(config.server.public_url);
    const app = createApp(services);
    let server;
    try {
      server = listen(app, services, config.server.host, config.server.port);
    } catch (err) {
      await rt.close();
      throw new Error(`cannot listen on ${config.server.host}:${config.server.port}: ${(err as Error).message} (is the port already in use?)`);
    }
    await startBackground(services);
    // From a checkout this builds the web UI in memory (in the background); the binary's embedded UI needs nothing.
    warmUi(rt.log);
    rt.log.info(`secbox ${rt.version} listening on ${server.url} (public URL ${config.server.public_url}, data ${config.server.data_dir})`);
    // §27: where responders answer (from the effective public URL), and the interaction listeners (none exist yet).
    rt.log.info(`responder URLs ${responderBaseUrl(config, "<handle>")}/… (responders.url_style = "${config.responders.url_style}")`);
    rt.log.info("interactions: off (no DNS, SMTP or HTTP capture listeners)");
    // SIGINT, SIGTERM and SIGHUP (a closed terminal, `systemctl kill -s HUP`) all stop cleanly: hits in progress
    // finish, pending captures and runs are written, the mail sender ends its send (supplement §11.10). Repeated
    // signals during the shutdown are ignored (kill -9 is the way to cut it short, at the cost of the batch window).
    await new Promise<void>((resolve, reject) => {
      let stopping = false;
      const stop = async (signal: NodeJS.Signals) => {
        if (stopping) return void rt.log.warn(`received ${signal} again, still shutting down`);
        stopping = true;
        rt.log.info(`received ${signal}, shutting down`);
        try {
          await server.stop();
          await stopBackground(services);
          await rt.close();
          resolve();
        } catch (err) {
          reject(err);
        }
      };
      onSignal = (signal) => void stop(signal);
      if (requested !== null) void stop(requested);
    });
    return 0;
  },
};
