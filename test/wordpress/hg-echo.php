<?php
// headgate's WordPress test (installed by setup.sh into WordPress' root):
// says what this request looked like when it reached WordPress, after
// WordPress' own config (which reads X-Forwarded-For) ran; with ?post=ID,
// also the address WordPress stored with each comment on that post.
require __DIR__ . '/wp-load.php';
header('Content-Type: application/json; charset=utf-8');
header('Cache-Control: no-store');
$out = array(
    'x_forwarded_for' => isset($_SERVER['HTTP_X_FORWARDED_FOR']) ? $_SERVER['HTTP_X_FORWARDED_FOR'] : null,
    'x_forwarded_proto' => isset($_SERVER['HTTP_X_FORWARDED_PROTO']) ? $_SERVER['HTTP_X_FORWARDED_PROTO'] : null,
    'remote_addr' => $_SERVER['REMOTE_ADDR'],
    'host' => isset($_SERVER['HTTP_HOST']) ? $_SERVER['HTTP_HOST'] : null,
);
if (isset($_GET['post'])) {
    $out['comments'] = array();
    foreach (get_comments(array('post_id' => (int) $_GET['post'], 'status' => 'all')) as $c) {
        $out['comments'][] = array('author' => $c->comment_author, 'ip' => $c->comment_author_IP, 'content' => $c->comment_content);
    }
}
echo json_encode($out);
