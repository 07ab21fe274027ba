<?php
// Debian's php-laravel-framework autoloader (every Illuminate component and its dependencies), and this app's classes.
require_once 'Illuminate/autoload.php';
spl_autoload_register(function ($class) {
    if (strncmp($class, 'App\\', 4) === 0) {
        $file = __DIR__.'/../app/'.str_replace('\\', '/', substr($class, 4)).'.php';
        if (is_file($file)) {
            require $file;
        }
    }
});
