<?php
// Router for PHP's built-in server in front of MediaWiki, written for
// headgate's test/mediawiki/setup.sh: the short URLs the cookbook assumes
// ($wgArticlePath = "/wiki/$1", scripts under /w/), what Apache's
// rewrite rules do on a real site. The docroot holds one entry, w, a link
// to Debian's /var/lib/mediawiki.
//   /wiki/TITLE  -> /w/index.php, MediaWiki reads the title from the path
//   /w/...       -> MediaWiki's own router (scripts, PATH_INFO, static files)
//   /            -> 301 to /wiki/Main_Page, as Wikipedia answers
$path = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH) ?? '/';
if ($path === '/wiki' || strncmp($path, '/wiki/', 6) === 0) {
    $dir = $_SERVER['DOCUMENT_ROOT'] . '/w';
    $_SERVER['SCRIPT_NAME'] = '/w/index.php';
    $_SERVER['PHP_SELF'] = '/w/index.php';
    $_SERVER['SCRIPT_FILENAME'] = $dir . '/index.php';
    unset($_SERVER['PATH_INFO'], $_SERVER['ORIG_PATH_INFO']);
    chdir($dir);
    require $dir . '/index.php';
    return true;
}
if (strncmp($path, '/w/', 3) === 0) {
    return require $_SERVER['DOCUMENT_ROOT'] . '/w/maintenance/dev/includes/router.php';
}
if ($path === '/') {
    header('Location: /wiki/Main_Page', true, 301);
    return true;
}
http_response_code(404);
header('Content-Type: text/plain; charset=UTF-8');
echo "not found\n";
return true;
