// Endpoints on allow-listed origins that defeat a host allow-list in script-src: JSONP endpoints (a script URL
// whose response runs a caller-chosen callback) and hosted AngularJS libraries (template injection without inline
// script). The lists are those of Google's CSP Evaluator (github.com/google/csp-evaluator, Apache-2.0,
// `allowlist_bypasses/jsonp.ts` and `angular.ts` of csp_evaluator 1.1.8), in its order: the host names and paths
// are facts about those sites; the matching code is ours. JSONP endpoints on the hosts its NEEDS_EVAL list names
// (Google Tag Manager, Analytics, AdServices) only run a callback with 'unsafe-eval'.
// Matching follows CSP's source matching: host (with `*.` wildcards) and, when the source has a path, the path
// (prefix when it ends with `/`, exact otherwise); scheme and port are ignored.

export const BYPASS_KIND: Record<BypassEndpoint["kind"], string> = { JSONP: "JSONP endpoints", AngularJS: "AngularJS libraries" };

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
  jsonp("bebezoo.1688.com/fragment/index.htm"),
  jsonp("www.google-analytics.com/gtm/js", true),
  jsonp("googleads.g.doubleclick.net/pagead/conversion/1036918760/wcm"),
  jsonp("www.googleadservices.com/pagead/conversion/1070110417/wcm", true),
  jsonp("www.google.com/tools/feedback/escalation-options"),
  jsonp("pin.aliyun.com/check_audio"),
  jsonp("offer.alibaba.com/market/CID100002954/5/fetchKeyword.do"),
  jsonp("ccrprod.alipay.com/ccr/arriveTime.json"),
  jsonp("group.aliexpress.com/ajaxAcquireGroupbuyProduct.do"),
  jsonp("detector.alicdn.com/2.7.3/index.php"),
  jsonp("suggest.taobao.com/sug"),
  jsonp("translate.google.com/translate_a/l"),
  jsonp("count.tbcdn.cn//counter3"),
  jsonp("wb.amap.com/channel.php"),
  jsonp("translate.googleapis.com/translate_a/l"),
  jsonp("afpeng.alimama.com/ex"),
  jsonp("accounts.google.com/o/oauth2/revoke"),
  jsonp("pagead2.googlesyndication.com/relatedsearch"),
  jsonp("yandex.ru/soft/browsers/check"),
  jsonp("api.facebook.com/restserver.php"),
  jsonp("mts0.googleapis.com/maps/vt"),
  jsonp("syndication.twitter.com/widgets/timelines/765840589183213568"),
  jsonp("www.youtube.com/profile_style"),
  jsonp("googletagmanager.com/gtm/js", true),
  jsonp("mc.yandex.ru/watch/24306916/1"),
  jsonp("share.yandex.net/counter/gpp/"),
  jsonp("ok.go.mail.ru/lady_on_lady_recipes_r.json"),
  jsonp("d1f69o4buvlrj5.cloudfront.net/__efa_15_1_ornpba.xekq.arg/optout_check"),
  jsonp("www.googletagmanager.com/gtm/js", true),
  jsonp("api.vk.com/method/wall.get"),
  jsonp("www.sharethis.com/get-publisher-info.php"),
  jsonp("google.ru/maps/vt"),
  jsonp("pro.netrox.sc/oapi/h_checksite.ashx"),
  jsonp("vimeo.com/api/oembed.json/"),
  jsonp("de.blog.newrelic.com/wp-admin/admin-ajax.php"),
  jsonp("ajax.googleapis.com/ajax/services/search/news"),
  jsonp("ssl.google-analytics.com/gtm/js", true),
  jsonp("pubsub.pubnub.com/subscribe/demo/hello_world/"),
  jsonp("pass.yandex.ua/services"),
  jsonp("id.rambler.ru/script/topline_info.js"),
  jsonp("m.addthis.com/live/red_lojson/100eng.json"),
  jsonp("passport.ngs.ru/ajax/check"),
  jsonp("catalog.api.2gis.ru/ads/search"),
  jsonp("gum.criteo.com/sync"),
  jsonp("maps.google.com/maps/vt"),
  jsonp("ynuf.alipay.com/service/um.json"),
  jsonp("securepubads.g.doubleclick.net/gampad/ads"),
  jsonp("c.tiles.mapbox.com/v3/texastribune.tx-congress-cvap/6/15/26.grid.json"),
  jsonp("rexchange.begun.ru/banners"),
  jsonp("an.yandex.ru/page/147484"),
  jsonp("links.services.disqus.com/api/ping"),
  jsonp("api.map.baidu.com/"),
  jsonp("tj.gongchang.com/api/keywordrecomm/"),
  jsonp("data.gongchang.com/livegrail/"),
  jsonp("ulogin.ru/token.php"),
  jsonp("beta.gismeteo.ru/api/informer/layout.js/120x240-3/ru/"),
  jsonp("maps.googleapis.com/maps/api/js/GeoPhotoService.GetMetadata"),
  jsonp("a.config.skype.com/config/v1/Skype/908_1.33.0.111/SkypePersonalization"),
  jsonp("maps.beeline.ru/w"),
  jsonp("target.ukr.net/"),
  jsonp("www.meteoprog.ua/data/weather/informer/Poltava.js"),
  jsonp("cdn.syndication.twimg.com/widgets/timelines/599200054310604802"),
  jsonp("wslocker.ru/client/user.chk.php"),
  jsonp("community.adobe.com/CommunityPod/getJSON"),
  jsonp("maps.google.lv/maps/vt"),
  jsonp("dev.virtualearth.net/REST/V1/Imagery/Metadata/AerialWithLabels/26.318581"),
  jsonp("awaps.yandex.ru/10/8938/02400400."),
  jsonp("a248.e.akamai.net/h5.hulu.com/h5.mp4"),
  jsonp("nominatim.openstreetmap.org/"),
  jsonp("plugins.mozilla.org/en-us/plugins_list.json"),
  jsonp("h.cackle.me/widget/32153/bootstrap"),
  jsonp("graph.facebook.com/1/"),
  jsonp("fellowes.ugc.bazaarvoice.com/data/reviews.json"),
  jsonp("widgets.pinterest.com/v3/pidgets/boards/ciciwin/hedgehog-squirrel-crafts/pins/"),
  jsonp("se.wikipedia.org/w/api.php"),
  jsonp("cse.google.com/api/007627024705277327428/cse/r3vs7b0fcli/queries/js"),
  jsonp("relap.io/api/v2/similar_pages_jsonp.js"),
  jsonp("c1n3.hypercomments.com/stream/subscribe"),
  jsonp("maps.google.de/maps/vt"),
  jsonp("books.google.com/books"),
  jsonp("connect.mail.ru/share_count"),
  jsonp("tr.indeed.com/m/newjobs"),
  jsonp("www-onepick-opensocial.googleusercontent.com/gadgets/proxy"),
  jsonp("www.panoramio.com/map/get_panoramas.php"),
  jsonp("client.siteheart.com/streamcli/client"),
  jsonp("www.facebook.com/restserver.php"),
  jsonp("autocomplete.travelpayouts.com/avia"),
  jsonp("www.googleapis.com/freebase/v1/topic/m/0344_"),
  jsonp("mts1.googleapis.com/mapslt/ft"),
  jsonp("publish.twitter.com/oembed"),
  jsonp("fast.wistia.com/embed/medias/o75jtw7654.json"),
  jsonp("partner.googleadservices.com/gampad/ads"),
  jsonp("pass.yandex.ru/services"),
  jsonp("gupiao.baidu.com/stocks/stockbets"),
  jsonp("widget.admitad.com/widget/init"),
  jsonp("api.instagram.com/v1/tags/partykungen23328/media/recent"),
  jsonp("video.media.yql.yahoo.com/v1/video/sapi/streams/063fb76c-6c70-38c5-9bbc-04b7c384de2b"),
  jsonp("ib.adnxs.com/jpt"),
  jsonp("pass.yandex.com/services"),
  jsonp("www.google.de/maps/vt"),
  jsonp("clients1.google.com/complete/search"),
  jsonp("api.userlike.com/api/chat/slot/proactive/"),
  jsonp("www.youku.com/index_cookielist/s/jsonp"),
  jsonp("mt1.googleapis.com/mapslt/ft"),
  jsonp("api.mixpanel.com/track/"),
  jsonp("wpd.b.qq.com/cgi/get_sign.php"),
  jsonp("pipes.yahooapis.com/pipes/pipe.run"),
  jsonp("gdata.youtube.com/feeds/api/videos/WsJIHN1kNWc"),
  jsonp("9.chart.apis.google.com/chart"),
  jsonp("cdn.syndication.twitter.com/moments/709229296800440320"),
  jsonp("api.flickr.com/services/feeds/photos_friends.gne"),
  jsonp("cbks0.googleapis.com/cbk"),
  jsonp("www.blogger.com/feeds/5578653387562324002/posts/summary/4427562025302749269"),
  jsonp("query.yahooapis.com/v1/public/yql"),
  jsonp("kecngantang.blogspot.com/feeds/posts/default/-/Komik"),
  jsonp("www.travelpayouts.com/widgets/50f53ce9ada1b54bcc000031.json"),
  jsonp("i.cackle.me/widget/32586/bootstrap"),
  jsonp("translate.yandex.net/api/v1.5/tr.json/detect"),
  jsonp("a.tiles.mapbox.com/v3/zentralmedia.map-n2raeauc.jsonp"),
  jsonp("maps.google.ru/maps/vt"),
  jsonp("c1n2.hypercomments.com/stream/subscribe"),
  jsonp("rec.ydf.yandex.ru/cookie"),
  jsonp("cdn.jsdelivr.net"),
  // AngularJS
  angular("gstatic.com/fsn/angular_js-bundle1.js"),
  angular("www.gstatic.com/fsn/angular_js-bundle1.js"),
  angular("www.googleadservices.com/pageadimg/imgad"),
  angular("yandex.st/angularjs/1.2.16/angular-cookies.min.js"),
  angular("yastatic.net/angularjs/1.2.23/angular.min.js"),
  angular("yuedust.yuedu.126.net/js/components/angular/angular.js"),
  angular("art.jobs.netease.com/script/angular.js"),
  angular("csu-c45.kxcdn.com/angular/angular.js"),
  angular("elysiumwebsite.s3.amazonaws.com/uploads/blog-media/rockstar/angular.min.js"),
  angular("inno.blob.core.windows.net/new/libs/AngularJS/1.2.1/angular.min.js"),
  angular("gift-talk.kakao.com/public/javascripts/angular.min.js"),
  angular("ajax.googleapis.com/ajax/libs/angularjs/1.2.0rc1/angular-route.min.js"),
  angular("master-sumok.ru/vendors/angular/angular-cookies.js"),
  angular("ayicommon-a.akamaihd.net/static/vendor/angular-1.4.2.min.js"),
  angular("pangxiehaitao.com/framework/angular-1.3.9/angular-animate.min.js"),
  angular("cdnjs.cloudflare.com/ajax/libs/angular.js/1.2.16/angular.min.js"),
  angular("96fe3ee995e96e922b6b-d10c35bd0a0de2c718b252bc575fdb73.ssl.cf1.rackcdn.com/angular.js"),
  angular("oss.maxcdn.com/angularjs/1.2.20/angular.min.js"),
  angular("reports.zemanta.com/smedia/common/angularjs/1.2.11/angular.js"),
  angular("cdn.shopify.com/s/files/1/0225/6463/t/1/assets/angular-animate.min.js"),
  angular("parademanagement.com.s3-website-ap-southeast-1.amazonaws.com/js/angular.min.js"),
  angular("cdn.jsdelivr.net/angularjs/1.1.2/angular.min.js"),
  angular("eb2883ede55c53e09fd5-9c145fb03d93709ea57875d307e2d82e.ssl.cf3.rackcdn.com/components/angular-resource.min.js"),
  angular("andors-trail.googlecode.com/git/AndorsTrailEdit/lib/angular.min.js"),
  angular("cdn.walkme.com/General/EnvironmentTests/angular/angular.min.js"),
  angular("laundrymail.com/angular/angular.js"),
  angular("s3-eu-west-1.amazonaws.com/staticancpa/js/angular-cookies.min.js"),
  angular("collade.demo.stswp.com/js/vendor/angular.min.js"),
  angular("mrfishie.github.io/sailor/bower_components/angular/angular.min.js"),
  angular("askgithub.com/static/js/angular.min.js"),
  angular("services.amazon.com/solution-providers/assets/vendor/angular-cookies.min.js"),
  angular("raw.githubusercontent.com/angular/code.angularjs.org/master/1.0.7/angular-resource.js"),
  angular("prb-resume.appspot.com/bower_components/angular-animate/angular-animate.js"),
  angular("dl.dropboxusercontent.com/u/30877786/angular.min.js"),
  angular("static.tumblr.com/x5qdx0r/nPOnngtff/angular-resource.min_1_.js"),
  angular("storage.googleapis.com/assets-prod.urbansitter.net/us-sym/assets/vendor/angular-sanitize/angular-sanitize.min.js"),
  angular("twitter.github.io/labella.js/bower_components/angular/angular.min.js"),
  angular("cdn2-casinoroom.global.ssl.fastly.net/js/lib/angular-animate.min.js"),
  angular("www.adobe.com/devnet-apps/flashshowcase/lib/angular/angular.1.1.5.min.js"),
  angular("eternal-sunset.herokuapp.com/bower_components/angular/angular.js"),
  angular("cdn.bootcss.com/angular.js/1.2.0/angular.min.js"),
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
