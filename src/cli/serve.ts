// `secbox serve`: migrate, then serve the API, responders, scheduler and mail sender.
import { createApp, createServices, listen, startBackground, stopBackground } from "../app";
import { openRuntime } from "../platform/boot";
import { configFrom, parseFlags, type Command } from "./common";

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
    const rt = await openRuntime(config);
    const services = createServices(rt);
    const app = createApp(services);
    let server;
    try {
      server = listen(app, services, config.server.host, config.server.port);
    } catch (err) {
      rt.close();
      throw new Error(`cannot listen on ${config.server.host}:${config.server.port}: ${(err as Error).message} (is the port already in use?)`);
    }
    await startBackground(services);
    rt.log.info(`secbox ${rt.version} listening on ${server.url} (public URL ${config.server.public_url}, data ${config.server.data_dir})`);
    await new Promise<void>((resolve) => {
      const stop = async (signal: string) => {
        rt.log.info(`received ${signal}, shutting down`);
        await server.stop();
        await stopBackground(services);
        rt.close();
        resolve();
      };
      process.once("SIGINT", () => void stop("SIGINT"));
      process.once("SIGTERM", () => void stop("SIGTERM"));
    });
    return 0;
  },
};
