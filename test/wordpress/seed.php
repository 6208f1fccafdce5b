<?php
// headgate's WordPress test: runs WordPress' installer and seeds the content
// the test reads. Run by setup.sh with HTTP_HOST set to the site's host (so
// that Debian's wp-config.php picks /etc/wordpress/config-HOST.php). Safe
// to run again: every item is looked up by its slug first.
if (PHP_SAPI !== 'cli') {
    exit(1);
}
$_SERVER['HTTP_HOST'] = getenv('HTTP_HOST');
$_SERVER['SERVER_NAME'] = preg_replace('/:.*/', '', $_SERVER['HTTP_HOST']);
$_SERVER['REQUEST_URI'] = '/';
$_SERVER['REQUEST_METHOD'] = 'GET';
define('WP_INSTALLING', true);
require '/usr/share/wordpress/wp-load.php';
// The installer mails the new site's address; this machine has no mail.
function wp_new_blog_notification($blog_title, $blog_url, $user_id, $password) {
}
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
require_once ABSPATH . 'wp-admin/includes/taxonomy.php';

function say($msg) {
    fwrite(STDOUT, "wordpress-setup: $msg\n");
}

$user = getenv('WP_ADMIN_USER');
$pass = getenv('WP_ADMIN_PASSWORD');

if (!is_blog_installed()) {
    $r = wp_install('Tiergarten Notes', $user, $user . '@example.com', 1, '', $pass, 'en_US');
    say("installed WordPress " . get_bloginfo('version') . " with user $user");
} else {
    say("WordPress " . get_bloginfo('version') . " is already installed");
    $u = get_user_by('login', $user);
    if ($u) {
        wp_set_password($pass, $u->ID);   // the test's login, whatever it was
    }
}

update_option('blogname', 'Tiergarten Notes');
update_option('blogdescription', 'Notes from a Berlin neighbourhood');
update_option('blog_public', 1);
update_option('posts_per_page', 5);
update_option('default_comment_status', 'open');
update_option('comment_moderation', 0);
update_option('comment_previously_approved', 0);
update_option('timezone_string', 'UTC');
global $wp_rewrite;
if (get_option('permalink_structure') !== '/%year%/%monthnum%/%postname%/') {
    say('permalinks: /%year%/%monthnum%/%postname%/');
}
$wp_rewrite->set_permalink_structure('/%year%/%monthnum%/%postname%/');
flush_rewrite_rules(false);   // the rewrite rules live in Apache's vhost, not .htaccess
switch_theme('twentytwentythree');

$author = get_user_by('login', $user)->ID;

function term($name, $slug, $tax) {
    $t = get_term_by('slug', $slug, $tax);
    if ($t) {
        return (int) $t->term_id;
    }
    $r = wp_insert_term($name, $tax, array('slug' => $slug));
    if (is_wp_error($r)) {
        fwrite(STDERR, "term $name: " . $r->get_error_message() . "\n");
        exit(1);
    }
    say("$tax: $name ($slug)");
    return (int) $r['term_id'];
}

// Slugs are given percent-encoded, as WordPress stores non-ASCII slugs
// (its sanitize_title would otherwise transliterate ü to u).
$cats = array(
    'food' => term('Food', 'food', 'category'),
    'walks' => term('Walks', 'walks', 'category'),
    'stadtleben' => term('Stadtleben', 'stadtleben', 'category'),
    'kueche' => term('Küche', 'k%c3%bcche', 'category'),
);
$tags = array(
    'berlin' => term('berlin', 'berlin', 'post_tag'),
    'tea' => term('tea', 'tea', 'post_tag'),
    'parks' => term('parks', 'parks', 'post_tag'),
    'muell' => term('Müll', 'm%c3%bcll', 'post_tag'),
    'tokyo' => term('東京', '%e6%9d%b1%e4%ba%ac', 'post_tag'),
);

function post($type, $title, $slug, $date, $cats, $tags, $body) {
    $existing = get_posts(array('name' => $slug, 'post_type' => $type, 'post_status' => 'any', 'numberposts' => 1));
    if ($existing) {
        say("$type: $title is there: " . get_permalink($existing[0]->ID));
        return $existing[0]->ID;
    }
    global $author;
    $id = wp_insert_post(array(
        'post_type' => $type,
        'post_title' => $title,
        'post_name' => $slug,
        'post_status' => 'publish',
        'post_author' => $author,
        'post_date' => $date,
        'post_date_gmt' => $date,
        'post_content' => $body,
        'post_category' => $cats,
        'comment_status' => 'open',
    ), true);
    if (is_wp_error($id)) {
        fwrite(STDERR, "$type $title: " . $id->get_error_message() . "\n");
        exit(1);
    }
    if ($tags) {
        wp_set_post_terms($id, $tags, 'post_tag');
    }
    say("$type: $title → " . get_permalink($id));
    return $id;
}

function body($title) {
    $p = array(
        "<!-- wp:paragraph -->\n<p>$title: notes from the streets around the Tiergarten, written on the way home.</p>\n<!-- /wp:paragraph -->",
        "<!-- wp:paragraph -->\n<p>The park opens early; the cafés along the canal a little later. This note says what is worth the walk.</p>\n<!-- /wp:paragraph -->",
        "<!-- wp:heading -->\n<h2>What to bring</h2>\n<!-- /wp:heading -->",
        "<!-- wp:paragraph -->\n<p>Comfortable shoes, a thermos of tea and an hour to spare.</p>\n<!-- /wp:paragraph -->",
    );
    return implode("\n\n", $p);
}

$posts = array(
    // title, slug (as stored), date, categories, tags
    array('東京の朝', '%e6%9d%b1%e4%ba%ac%e3%81%ae%e6%9c%9d', '2024-03-02 08:00:00', array('walks'), array('tokyo', 'tea')),
    array('Müll trennen in Berlin', 'm%c3%bcll-trennen-in-berlin', '2024-03-09 09:30:00', array('stadtleben'), array('muell', 'berlin')),
    array('Über die Spree', '%c3%bcber-die-spree', '2024-03-16 10:00:00', array('walks'), array('berlin')),
    array('Größe zählt nicht', 'gr%c3%b6%c3%9fe-z%c3%a4hlt-nicht', '2024-03-23 11:00:00', array('stadtleben'), array('berlin')),
    array('Café culture', 'cafe-culture', '2024-04-06 12:00:00', array('food'), array('tea', 'berlin')),
    array('Twelve tips for the Tiergarten', 'twelve-tips-for-the-tiergarten', '2024-05-04 13:00:00', array('walks'), array('parks')),
    array('Käsespätzle im Winter', 'k%c3%a4sesp%c3%a4tzle-im-winter', '2024-05-11 18:00:00', array('food', 'kueche'), array('berlin')),
    array('A morning in the Rosengarten', 'a-morning-in-the-rosengarten', '2024-05-18 07:00:00', array('walks'), array('parks')),
    array('Tea by the Landwehrkanal', 'tea-by-the-landwehrkanal', '2024-06-01 16:00:00', array('food'), array('tea')),
    array('The Victory Column at dusk', 'the-victory-column-at-dusk', '2024-06-08 20:00:00', array('walks'), array('parks', 'berlin')),
    array('Flohmarkt am Sonntag', 'flohmarkt-am-sonntag', '2024-06-15 10:00:00', array('stadtleben'), array('berlin')),
    array('抹茶と雨', '%e6%8a%b9%e8%8c%b6%e3%81%a8%e9%9b%a8', '2024-07-06 15:00:00', array('food', 'kueche'), array('tea', 'tokyo')),
    array('Bicycles on the Straße des 17. Juni', 'bicycles-on-the-strasse-des-17-juni', '2024-07-13 09:00:00', array('stadtleben'), array('berlin')),
);
foreach ($posts as $p) {
    $c = array();
    foreach ($p[3] as $k) {
        $c[] = $cats[$k];
    }
    $t = array();
    foreach ($p[4] as $k) {
        $t[] = $tags[$k];
    }
    post('post', $p[0], $p[1], $p[2], $c, $t, body($p[0]));
}

post('page', 'About', 'about', '2024-01-01 00:00:00', array(), array(), body('About these notes'));
post('page', 'Über uns', '%c3%bcber-uns', '2024-01-01 00:00:00', array(), array(), body('Über uns'));
post('page', 'Impressum', 'impressum', '2024-01-01 00:00:00', array(), array(), body('Impressum'));

// The home page, as a site owner makes it in the Site Editor: the theme's
// demo heading and its call to action (a button with no link, which
// Lighthouse's crawlable-anchors rightly fails) filled in. Saved, as the
// Site Editor saves it, as a wp_template post of the theme.
$theme_home = file_get_contents(get_template_directory() . '/templates/home.html');
$home = str_replace(
    array('Mindblown: a blog about philosophy.', '<!-- wp:pattern {"slug":"twentytwentythree/cta"} /-->'),
    array('Tiergarten Notes: walks, food and city life.',
        "<!-- wp:buttons -->\n<div class=\"wp-block-buttons\"><!-- wp:button -->\n<div class=\"wp-block-button\">" .
        "<a class=\"wp-block-button__link wp-element-button\" href=\"" . esc_url(home_url('/about/')) . "\">About these notes</a></div>\n" .
        "<!-- /wp:button --></div>\n<!-- /wp:buttons -->"),
    $theme_home);
$tpl = get_posts(array('name' => 'home', 'post_type' => 'wp_template', 'post_status' => 'any', 'numberposts' => 1));
if ($tpl) {
    wp_update_post(array('ID' => $tpl[0]->ID, 'post_content' => $home));
    say('home template: there, content brought up to date');
} else {
    $id = wp_insert_post(array('post_type' => 'wp_template', 'post_name' => 'home', 'post_title' => 'Home',
        'post_status' => 'publish', 'post_content' => $home), true);
    if (is_wp_error($id)) {
        fwrite(STDERR, 'home template: ' . $id->get_error_message() . "\n");
        exit(1);
    }
    wp_set_object_terms($id, get_stylesheet(), 'wp_theme');
    say('home template: heading and call to action filled in');
}

$n = wp_count_posts('post')->publish;
say("content: $n published posts (" . get_option('posts_per_page') . " a page), " .
    wp_count_posts('page')->publish . " pages, " . count(get_terms(array('taxonomy' => 'category', 'hide_empty' => false))) .
    " categories, " . count(get_terms(array('taxonomy' => 'post_tag', 'hide_empty' => false))) . " tags");
