<?php
// Sign imgedge GET /img URLs from PHP (7.4+, no extensions beyond the defaults): the same HMAC-SHA256 of the same
// path as signers/js/imgedge-sign.mjs, which the worker checks with.
//
//   require 'imgedge_sign.php';
//   echo imgedge_image_url('https://images.example.com', ['width' => 800, 'format' => 'auto'], 'photos/cat.jpg', $key);
//   // https://images.example.com/img/width=800,format=auto/photos/cat.jpg?sig=...
//
//   SIGNING_KEY=... php imgedge_sign.php '/img/width=800/photos/cat.jpg' [--expires-in 3600]

/** The path as the worker sees it: spaces and non-ASCII percent-encoded, `.` and `..` segments resolved. */
function imgedge_requested_path(string $path): string
{
    if (strpbrk($path, '?#') !== false) {
        throw new InvalidArgumentException("a /img path has no ? or #: $path");
    }
    $text = str_replace('\\', '/', str_replace(["\t", "\n", "\r"], '', trim($path, "\x00..\x20")));
    // What a URL parser percent-encodes in a path (the URL Standard's path percent-encode set), besides non-ASCII; ^ as
    // newer parsers do (older ones keep it, and %5E reads the same to both).
    $encoded = preg_replace_callback('/[\x00-\x20"<>^`{}\x7f-\xff]/', fn ($m) => sprintf('%%%02X', ord($m[0])), $text);
    $parts = explode('/', substr($encoded, 0, 1) === '/' ? substr($encoded, 1) : $encoded);
    $segments = [];
    foreach ($parts as $index => $part) {
        $last = $index === count($parts) - 1;
        if (preg_match('/^(\.|%2e)(\.|%2e)$/i', $part)) {
            array_pop($segments);
            if ($last) $segments[] = '';
        } elseif (preg_match('/^(\.|%2e)$/i', $part)) {
            if ($last) $segments[] = '';
        } else {
            $segments[] = $part;
        }
    }
    return '/' . implode('/', $segments);
}

/** The path as requested with its `sig` (and `exp`, a Unix time, when given). */
function imgedge_sign_path(string $path, string $secret, ?int $exp = null): string
{
    $requested = imgedge_requested_path($path);
    $message = $exp === null ? $requested : "$requested?exp=$exp";
    $sig = rtrim(strtr(base64_encode(hash_hmac('sha256', $message, $secret, true)), '+/', '-_'), '=');
    return $exp === null ? "$requested?sig=$sig" : "$requested?exp=$exp&sig=$sig";
}

/** `/img/<options>/<source>`: options an array (values percent-encoded) or a ready `name=value,...` string. */
function imgedge_image_path($options, string $source): string
{
    if (is_array($options)) {
        $pairs = [];
        foreach ($options as $name => $value) {
            $pairs[] = $name . '=' . rawurlencode(is_bool($value) ? ($value ? 'true' : 'false') : (string) $value);
        }
        $options = implode(',', $pairs);
    }
    $key = implode('/', array_map('rawurlencode', explode('/', ltrim($source, '/'))));
    return '/img/' . ($options === '' ? '_' : $options) . '/' . $key;
}

/** A whole /img URL on `$base`, signed when `$secret` is given, expiring at Unix time `$exp` when given. */
function imgedge_image_url(string $base, $options, string $source, ?string $secret = null, ?int $exp = null): string
{
    $path = imgedge_image_path($options, $source);
    return rtrim($base, '/') . ($secret === null ? imgedge_requested_path($path) : imgedge_sign_path($path, $secret, $exp));
}

if (PHP_SAPI === 'cli' && realpath($_SERVER['SCRIPT_FILENAME'] ?? '') === __FILE__) {
    $args = array_slice($argv, 1);
    $expires = null;
    $at = array_search('--expires-in', $args, true);
    if ($at !== false) {
        $expires = time() + (int) $args[$at + 1];
        array_splice($args, $at, 2);
    }
    $key = getenv('SIGNING_KEY');
    if (!$key || count($args) !== 1 || strpos($args[0], '/img/') !== 0) {
        fwrite(STDERR, "usage: SIGNING_KEY=... php imgedge_sign.php '/img/<options>/<source>' [--expires-in SECONDS]\n");
        exit(2);
    }
    echo imgedge_sign_path($args[0], $key, $expires), "\n";
}
