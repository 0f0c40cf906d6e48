// Endpoints on commonly allow-listed origins that defeat a host allow-list in script-src: JSONP endpoints
// (a script URL whose response runs a caller-chosen callback) and hosted AngularJS libraries (template
// injection without inline script). A curated subset of the public bypass lists of Google's CSP Evaluator
// (github.com/google/csp-evaluator, Apache-2.0), limited to origins that real policies allow-list often.
// Matching follows CSP's source matching: host (with `*.` wildcards) and, when the source has a path, the path
// (prefix when it ends with `/`, exact otherwise); scheme and port are ignored.

export interface BypassEndpoint {
  host: string;
  path: string;
  kind: "JSONP" | "AngularJS";
  /** JSONP endpoints whose callback only runs with 'unsafe-eval'. */
  needsEval?: boolean;
}

const jsonp = (url: string, needsEval = false): BypassEndpoint => endpoint(url, "JSONP", needsEval);
const angular = (url: string): BypassEndpoint => endpoint(url, "AngularJS", false);

function endpoint(url: string, kind: BypassEndpoint["kind"], needsEval: boolean): BypassEndpoint {
  const slash = url.indexOf("/");
  const host = slash < 0 ? url : url.slice(0, slash);
  const path = slash < 0 ? "/" : url.slice(slash);
  return needsEval ? { host, path, kind, needsEval } : { host, path, kind };
}

export const BYPASS_ENDPOINTS: BypassEndpoint[] = [
  // JSONP
  jsonp("www.google.com/tools/feedback/escalation-options"),
  jsonp("clients1.google.com/complete/search"),
  jsonp("books.google.com/books"),
  jsonp("cse.google.com/api/007627024705277327428/cse/r3vs7b0fcli/queries/js"),
  jsonp("accounts.google.com/o/oauth2/revoke"),
  jsonp("translate.google.com/translate_a/l"),
  jsonp("translate.googleapis.com/translate_a/l"),
  jsonp("ajax.googleapis.com/ajax/services/search/news"),
  jsonp("maps.googleapis.com/maps/api/js/GeoPhotoService.GetMetadata"),
  jsonp("www.googleapis.com/freebase/v1/topic/m/0344_"),
  jsonp("maps.google.com/maps/vt"),
  jsonp("googleads.g.doubleclick.net/pagead/conversion/1036918760/wcm"),
  jsonp("securepubads.g.doubleclick.net/gampad/ads"),
  jsonp("partner.googleadservices.com/gampad/ads"),
  jsonp("pagead2.googlesyndication.com/relatedsearch"),
  jsonp("www.youtube.com/profile_style"),
  jsonp("api.facebook.com/restserver.php"),
  jsonp("www.facebook.com/restserver.php"),
  jsonp("graph.facebook.com/1/"),
  jsonp("syndication.twitter.com/widgets/timelines/765840589183213568"),
  jsonp("cdn.syndication.twimg.com/widgets/timelines/599200054310604802"),
  jsonp("publish.twitter.com/oembed"),
  jsonp("api.instagram.com/v1/tags/partykungen23328/media/recent"),
  jsonp("widgets.pinterest.com/v3/pidgets/boards/ciciwin/hedgehog-squirrel-crafts/pins/"),
  jsonp("vimeo.com/api/oembed.json/"),
  jsonp("fast.wistia.com/embed/medias/o75jtw7654.json"),
  jsonp("api.vk.com/method/wall.get"),
  jsonp("mc.yandex.ru/watch/24306916/1"),
  jsonp("api.mixpanel.com/track/"),
  jsonp("www.blogger.com/feeds/5578653387562324002/posts/summary/4427562025302749269"),
  jsonp("se.wikipedia.org/w/api.php"),
  jsonp("query.yahooapis.com/v1/public/yql"),
  jsonp("links.services.disqus.com/api/ping"),
  jsonp("gum.criteo.com/sync"),
  jsonp("ib.adnxs.com/jpt"),
  jsonp("api.flickr.com/services/feeds/photos_friends.gne"),
  jsonp("cdn.jsdelivr.net"),
  jsonp("www.googletagmanager.com/gtm/js", true),
  jsonp("googletagmanager.com/gtm/js", true),
  jsonp("www.google-analytics.com/gtm/js", true),
  jsonp("ssl.google-analytics.com/gtm/js", true),
  jsonp("www.googleadservices.com/pagead/conversion/1070110417/wcm", true),
  // AngularJS
  angular("ajax.googleapis.com/ajax/libs/angularjs/1.2.0rc1/angular-route.min.js"),
  angular("cdnjs.cloudflare.com/ajax/libs/angular.js/1.2.16/angular.min.js"),
  angular("cdn.jsdelivr.net/angularjs/1.1.2/angular.min.js"),
  angular("www.gstatic.com/fsn/angular_js-bundle1.js"),
  angular("gstatic.com/fsn/angular_js-bundle1.js"),
  angular("www.googleadservices.com/pageadimg/imgad"),
  angular("storage.googleapis.com/assets-prod.urbansitter.net/us-sym/assets/vendor/angular-sanitize/angular-sanitize.min.js"),
  angular("raw.githubusercontent.com/angular/code.angularjs.org/master/1.0.7/angular-resource.js"),
  angular("cdn.shopify.com/s/files/1/0225/6463/t/1/assets/angular-animate.min.js"),
  angular("oss.maxcdn.com/angularjs/1.2.20/angular.min.js"),
  angular("yastatic.net/angularjs/1.2.23/angular.min.js"),
  angular("s3-eu-west-1.amazonaws.com/staticancpa/js/angular-cookies.min.js"),
  angular("cdn.bootcss.com/angular.js/1.2.0/angular.min.js"),
  angular("static.tumblr.com/x5qdx0r/nPOnngtff/angular-resource.min_1_.js"),
  angular("www.adobe.com/devnet-apps/flashshowcase/lib/angular/angular.1.1.5.min.js"),
];

/**
 * The first known bypass endpoint a host source allows. `host` is lower-case, possibly `*.`-prefixed; `path`
 * is the source's path or "" when it has none. JSONP endpoints needing eval count only with `evalAllowed`.
 */
export function findBypass(host: string, path: string, evalAllowed: boolean): BypassEndpoint | undefined {
  const h = host.replace(/\.$/, "");
  const wildcard = h.startsWith("*.");
  const suffix = wildcard ? h.slice(1) : "";
  for (const e of BYPASS_ENDPOINTS) {
    if (wildcard ? !e.host.endsWith(suffix) : e.host !== h) continue;
    if (path !== "" && path !== "/") {
      if (path.endsWith("/") ? !e.path.startsWith(path) : e.path !== path) continue;
    }
    if (e.needsEval && !evalAllowed) continue;
    return e;
  }
  return undefined;
}
