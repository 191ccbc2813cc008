/**
 * The sandbox's unicode emoji names: a part of the server's emoji set (faces, hands, hearts, status
 * symbols, arrows, colours, keycaps, objects, nature, animals, food, sports, people), each code
 * with all the names the server gives it, spelled as the server spells them. Not the whole set: a
 * name missing here is refused as unknown in a reaction, and it or an emoji character missing here
 * stays as written in a message, where the server would show an emoji.
 */

/**
 * Each entry is a code (the server's `emoji_code`: hex code points joined by `-`, without U+FE0F)
 * and its names, the server's canonical name first; entries are separated by `;`.
 */
const TABLE = `
1f600 grinning happy; 1f604 big_smile; 1f606 laughing lol; 1f605 sweat_smile; 1f602 joy tears laughter_tears
1f923 rolling_on_the_floor_laughing rofl; 1f642 smile; 263a smiling_face relaxed; 1f60a blush
1f607 innocent halo; 1f643 upside_down oops; 1f609 wink; 1f60c relieved; 1f60d heart_eyes in_love; 1f60b yum
1f61b stuck_out_tongue mischievous; 1f929 star_struck; 1f973 partying_face; 1f917 hug arms_open
1f913 nerd geek; 1f60e sunglasses; 1f60f smirk smug; 1f914 thinking; 1f644 rolling_eyes; 1f610 neutral
1f612 unamused; 1f62c grimacing nervous anxious; 1f615 oh_no half_frown concerned confused; 1f61f worried
1f61e disappointed; 1f614 pensive tired; 1f641 frown slight_frown; 2639 sad big_frown; 1f622 cry; 1f62d sob
1f613 sweat; 1f620 angry; 1f621 rage mad grumpy very_angry; 1f62e open_mouth surprise
1f633 flushed embarrassed blushing; 1f631 scream; 1f628 fear scared shock
1f92f exploding_head mind_blown shocked; 1f62a sleepy; 1f634 sleeping
1f912 sick flu face_with_thermometer ill fever; 1f910 silence quiet hush zip_it lips_are_sealed
1f926 face_palm; 1f937 shrug; 1f480 skull; 1f47b ghost boo spooky haunted; 1f4a9 poop pile_of_poo
1f921 clown; 1f47d alien ufo; 1f916 robot; 1f648 see_no_evil; 1f44d +1 thumbs_up like; 1f44e -1 thumbs_down
1f44f clap applause; 1f64f folded_hands welcome thank_you namaste pray; 1f64c raised_hands praise
1f91d handshake done_deal; 1f44a fist_bump punch; 270a fist power; 1f91e fingers_crossed
1f918 rock_on sign_of_the_horns; 1f44c ok got_it; 1f446 point_up this; 1f447 point_down; 1f44b wave hello hi
270b hand raised_hand; 1f91a stop; 1f4aa muscle; 1f440 eyes looking; 2764 heart love love_you
1f9e1 orange_heart; 1f49b yellow_heart heart_of_gold; 1f49a green_heart envy; 1f499 blue_heart
1f49c purple_heart bravery; 1f494 broken_heart heartache; 1f495 two_hearts; 2705 check all_good approved
2714 check_mark; 274c cross_mark incorrect wrong; 274e x; 26a0 warning caution danger
26d4 no_entry wrong_way; 1f6ab prohibited not_allowed; 2753 question; 2757 exclamation; 1f534 red_circle
1f7e1 yellow_circle yellow; 1f7e2 green_circle green; 2795 plus add; 2796 minus subtract; 1f195 new
1f197 squared_ok; 1f4af 100 hundred; 0031-20e3 one; 0032-20e3 two; 0033-20e3 three; 0034-20e3 four
0035-20e3 five; 0036-20e3 six; 0037-20e3 seven; 0038-20e3 eight; 0039-20e3 nine; 1f51f ten; 1f389 tada
1f38a confetti party_ball; 1f388 balloon celebration; 1f381 gift present; 1f382 birthday
1f3c6 trophy winner; 1f947 first_place gold number_one; 1f451 crown queen king; 2b50 star
1f31f glowing_star; 2728 sparkles glamour; 1f525 fire lit hot flame; 1f4a5 boom explosion crash collision
26a1 high_voltage zap; 1f680 rocket; 1f557 time clock; 23f3 time_ticking hourglass
231b times_up hourglass_done; 1f570 mantelpiece_clock; 23f0 alarm_clock; 1f4c5 calendar
1f6e0 working_on_it hammer_and_wrench tools; 1f528 hammer maintenance handyman handywoman
2699 gear settings mechanical engineer; 1f41b bug caterpillar; 1f4a1 light_bulb bulb idea
1f514 notifications bell; 1f4e3 megaphone shout; 1f512 locked; 1f513 unlocked; 1f511 key; 1f517 link
1f4cc push_pin thumb_tack; 1f4dd memo note; 270f pencil; 1f4e6 package; 2709 email envelope mail
1f4da books; 1f4c8 chart upwards_trend growing increasing; 1f50d search find magnifying_glass
1f4bb computer laptop; 1f4b0 money; 1f3c1 checkered_flag race go start; 1f4a4 zzz; 1f355 pizza; 1f32e taco
1f354 hamburger; 1f35f fries; 1f37f popcorn; 1f957 salad; 1f363 sushi; 1f35c ramen noodles; 1f9c0 cheese
1f36a cookie; 1f370 cake; 1f369 donut doughnut; 1f368 ice_cream gelato; 1f34e apple; 1f34c banana
1f353 strawberry; 1f349 watermelon; 2615 coffee; 1f375 tea; 1f37a beer; 1f37b beers; 1f377 wine
1f378 cocktail; 1f419 octopus; 1f415 dog woof; 1f408 cat meow; 1f98a fox; 1f43b bear; 1f43c panda
1f438 frog; 1f427 penguin; 1f986 duck; 1f984 unicorn; 1f41d bee buzz honeybee; 1f98b butterfly
1f422 turtle tortoise; 1f409 dragon; 1f42c dolphin flipper; 1f41f fish; 2600 sunny; 2601 cloud overcast
1f327 rainy soaked drenched; 2602 umbrella; 26c8 thunderstorm thunder_and_rain; 2744 snowflake; 2603 snowman
1f308 rainbow pride lgbtq; 1f319 moon; 1f30a ocean; 1f4a7 drop water_drop; 1f603 smiley
1f601 grinning_face_with_smiling_eyes; 1f61c stuck_out_tongue_wink joking crazy; 1f92a zany_face goofy small
1f97a pleading_face begging mercy puppy_eyes; 1f922 nauseated queasy; 1f92e face_vomiting puke vomit
1f927 sneezing; 1f637 mask; 1f920 cowboy; 1f608 smiling_devil smiling_imp smiling_face_with_horns
1f47f devil imp angry_devil; 1f47e space_invader; 1f625 exhausted disappointed_relieved stressed
1f62b anguish; 1f629 weary distraught; 1f624 triumph; 1f616 confounded agony; 1f630 cold_sweat
1f92d face_with_hand_over_mouth whoops; 1f92b shushing_face shush; 1f925 lying
1f636 speechless no_mouth blank poker_face; 1f611 expressionless; 1f924 drooling; 1f635 dizzy
1f974 woozy_face intoxicated tipsy uneven_eyes wavy_mouth
1f975 hot_face feverish heat_stroke red_faced sweating
1f976 cold_face blue_faced freezing frostbite icicles; 1f971 yawning_face bored yawn
1f978 disguised_face disguise incognito; 1f9d0 face_with_monocle monocle stuffy
1f928 face_with_raised_eyebrow distrust skeptic; 1f91f love_you_gesture ily; 1f919 call_me; 1f448 point_left
1f449 point_right; 261d wait_one_second point_of_information asking_a_question
1f596 spock live_long_and_prosper; 270c peace_sign victory; 1f932 palms_up_together prayer; 1f450 open_hands
1f64b raising_hand pick_me; 1f645 no_signal nope; 1f646 ok_signal; 1f647 bow
1f937-200d-2640 woman_shrugging; 1f937-200d-2642 man_shrugging; 1f926-200d-2640 woman_facepalming
1f926-200d-2642 man_facepalming; 1f441-200d-1f5e8 eye_in_speech_bubble speech witness
1f9e0 brain intelligent; 270d writing; 1f485 nail_polish nail_care; 1f933 selfie; 1f463 footprints feet
1f442 ear; 1f443 nose; 1f444 lips mouth; 1f445 tongue; 1f5a4 black_heart; 1f90d white_heart
1f90e brown_heart; 1f496 sparkling_heart; 1f497 heart_pulse growing_heart; 1f498 cupid smitten heart_arrow
1f49d gift_heart; 2763 heart_exclamation; 1f49e revolving_hearts; 1f493 heartbeat; 1f49f heart_box
2611 checkbox; 2716 multiplication multiply; 2754 grey_question; 2755 grey_exclamation
203c bangbang double_exclamation; 2049 interrobang; 1f6a8 siren rotating_light alert
1f6a7 work_in_progress construction_zone; 2139 info; 1f4a2 anger bam pow; 1f4ac umm speech_balloon
1f4ad thought dream; 1f5e8 speech_bubble; 1f4ab seeing_stars; 1f4a6 sweat_drops; 1f4a8 dash
2797 division divide; 267b recycle; 1f501 repeat; 1f502 repeat_one; 1f504 counterclockwise return
1f503 clockwise; 1f500 shuffle; 23e9 fast_forward; 23ea rewind fast_reverse; 23eb double_up fast_up
23ec double_down fast_down; 25b6 play; 25c0 play_reverse; 23f8 pause; 23f9 stop_button; 23fa record
23ed next_track skip_forward; 23ee previous_track skip_back; 23ef play_pause; 2b06 up north; 2b07 down south
2b05 left west; 27a1 right east; 2197 upper_right north_east; 2198 lower_right south_east
2199 lower_left south_west; 2196 upper_left north_west; 2195 up_down; 2194 left_right swap
21a9 reply left_hook; 21aa forward right_hook; 2934 heading_up; 2935 heading_down
1f53c upvote up_button increase; 1f53d downvote down_button decrease; 1f51d top; 1f519 back; 1f51b on
1f51c soon; 1f51a end; 1f7e0 orange_circle; 1f535 blue_circle; 1f7e3 purple_circle; 1f7e4 brown_circle
26ab black_circle; 26aa white_circle; 1f7e5 red_square red; 1f7e7 orange_square; 1f7e8 yellow_large_square
1f7e9 green_large_square; 1f7e6 blue_square; 1f7ea purple_square; 1f7eb brown_square
2b1b black_large_square; 2b1c white_large_square; 25fc black_medium_square; 25fb white_medium_square
25fe black_medium_small_square; 25fd white_medium_small_square; 25aa black_small_square
25ab white_small_square; 1f536 large_orange_diamond; 1f537 large_blue_diamond; 1f538 small_orange_diamond
1f539 small_blue_diamond; 1f53a red_triangle_up; 1f53b red_triangle_down
1f4a0 cute kawaii diamond_with_a_dot; 1f518 radio_button; 1f533 black_and_white_square
1f532 white_and_black_square; 0023-20e3 hash; 002a-20e3 asterisk; 0030-20e3 zero; 1f522 1234 numbers
1f521 abcd alphabet; 1f520 capital_abcd capital_letters; 1f523 symbols; 1f524 abc; 1f199 squared_up
1f193 free; 1f192 cool; 1f196 ng; 1f194 id; 1f191 cl; 1f198 sos; 00a9 copyright c; 00ae registered r
2122 tm trademark; 1f51e underage nc17; 1f4ca bar_chart; 1f4c9 downwards_trend shrinking decreasing
1f4cb clipboard; 1f4c4 document paper file page; 1f4c3 page_with_curl curl; 1f4d1 place_holder
1f4c1 organize file_folder; 1f4c2 folder; 1f5c2 sort; 1f4ce paperclip attachment
1f587 office_supplies paperclip_chain linked; 1f4cf ruler straightedge
1f4d0 carpenter_square triangular_ruler; 1f4cd pin sewing_pin; 1f4e5 inbox; 1f4e4 outbox
1f4e8 mail_received; 1f4e7 e-mail; 1f4e9 mail_sent sealed; 1f4eb mailbox; 1f4ea closed_mailbox
1f4ec unread_mail; 1f4ed inbox_zero empty_mailbox no_mail; 1f4ee mail_dropoff; 1f4de landline home_phone
260e phone telephone; 1f4f1 mobile_phone smartphone iphone android; 1f4f2 calling
1f4e2 loudspeaker bullhorn; 1f515 mute_notifications; 1f50a louder sound; 1f509 softer; 1f508 speaker
1f507 mute no_sound; 1f50b battery full_battery; 1f50c electric_plug; 1f4be floppy_disk; 1f4bf cd; 1f4c0 dvd
1f5a5 desktop_computer; 1f5a8 printer; 2328 keyboard; 1f5b1 computer_mouse; 1f4f7 camera
1f4f8 taking_a_picture say_cheese; 1f4f9 video_camera video_recorder; 1f3a5 movie_camera
1f4fa tv television; 1f4fb radio; 1f50e magnifying_glass_tilted_right magnifying
1f510 secure lock_with_key safe commitment loyalty; 1f50f privacy key_signing digital_security protected
1f5dd secret dungeon old_key encrypted clue hint; 1f6e1 shield; 1f527 fixing wrench
1f529 nut_and_bolt screw; 26cf mine pick; 2692 at_work hammer_and_pick; 1f9f0 toolbox chest
1f9ea test_tube chemistry; 1f52c science microscope; 1f52d telescope; 1f4e1 satellite_antenna
1f5d1 wastebasket trash_can; 1f5d3 spiral_calendar pad; 1f4c6 date; 23f1 stopwatch; 23f2 timer; 231a watch
1f4b8 losing_money easy_come_easy_go money_with_wings; 1f4b5 dollar_bills; 1f4b6 euro_banknotes
1f4b7 pound_notes; 1f4b4 yen_banknotes; 1f4b3 credit_card debit_card
1f9fe receipt accounting bookkeeping evidence proof; 1f4b2 dollars; 1f4b1 exchange; 1f3e0 house
1f3e1 suburb; 1f3e2 office; 1f3e3 japan_post; 1f3e5 hospital; 1f3e6 bank; 1f3eb school; 1f3ed factory
1f3d7 construction; 1f30d earth_africa; 1f30e earth_americas; 1f30f earth_asia; 1f310 www globe
1f5fa map world_map road_trip; 1f9ed compass navigation orienteering; 26f0 mountain; 1f3d4 snowy_mountain
1f30b volcano; 1f3d5 campsite; 1f3d6 beach; 1f3dd island; 1f3d9 city skyline; 1f3d8 houses; 1f3e8 hotel
2708 airplane; 1f6eb take_off departure airplane_departure; 1f6ec landing arrival airplane_arrival
1f681 helicopter; 1f682 train steam_locomotive; 1f686 oncoming_train; 1f687 subway; 1f68c bus school_bus
1f695 taxi rideshare; 1f697 car; 1f69a moving_truck
1f69b truck tractor-trailer big_rig semi_truck transport_truck; 1f6b2 bike bicycle; 1f6f4 kick_scooter
1f6a6 traffic_light vertical_traffic_light; 1f6a5 horizontal_traffic_light; 1f6d1 stop_sign octagonal_sign
2693 anchor; 26f5 boat sailboat; 1f6a2 ship; 1f6f8 flying_saucer; 1f6f0 satellite; 1f6a9 triangular_flag
1f3f3 white_flag surrender; 1f3f4 black_flag; 1f38c crossed_flags solidarity
1f3af direct_hit darts bulls_eye; 1f3b2 dice die; 1f3ae video_game; 1f579 joystick arcade
1f3b0 slot_machine; 1f3b3 strike bowling; 1f3b5 music; 1f3b6 musical_notes; 1f3a7 headphones
1f3a4 microphone mike mic; 1f3b8 guitar; 1f3b9 piano musical_keyboard; 1f3ba trumpet; 1f3bb violin
1f941 drum; 1f3a8 art palette painting; 1f3ad performing_arts drama theater; 1f3ac action
1f384 holiday_tree; 1f383 jack-o-lantern pumpkin; 1f386 fireworks; 1f387 sparkler
1f9e8 firecracker dynamite explosive; 1f3c5 medal; 1f396 military_medal; 1f948 second_place silver
1f949 third_place bronze; 1f397 reminder_ribbon; 1f39f ticket; 1f3ab pass; 1f48e gem crystal
1f526 flashlight; 1f56f candle; 1f4d6 book open_book; 1f4d5 red_book closed_book; 1f4d7 green_book
1f4d8 blue_book; 1f4d9 orange_book; 1f4d3 notebook composition_book; 1f4d2 ledger spiral_notebook
1f4d4 decorative_notebook; 1f4dc scroll; 1f4f0 headlines; 1f516 bookmark; 1f3f7 label tag price_tag
2712 black_nib nib; 1f58a pen ballpoint_pen; 1f58b fountain_pen; 1f58c paintbrush; 1f58d crayon
2702 scissors; 1f5c3 archive; 1f5c4 file_cabinet; 1f5f3 ballot_box; 1f4ef horn; 1f48c love_letter
1f5ef anger_bubble; 1f3f9 bow_and_arrow archery; 1f5e1 dagger rated_for_violence; 2694 duel swords
1f52b gun; 1f4a3 bomb; 1f9ef fire_extinguisher extinguish quench; 1f489 injection syringe
1f48a medicine pill; 1f321 temperature thermometer warm; 1f9f2 magnet attraction horseshoe
1f9eb petri_dish biology culture; 1f9ec dna evolution gene genetics life; 1f9ee abacus calculation
1f9f1 brick bricks clay mortar wall; 1f9f9 broom sweeping; 1f9fa basket farming laundry picnic
1f9fb roll_of_paper paper_towels toilet_paper; 1f9fc soap bar bathing lather soapdish
1f9fd sponge absorbing porous; 1f6bf shower; 1f6c1 bathtub; 1f6bd toilet; 1f6aa door; 1f6cf bed bedroom
1f6cb living_room furniture couch_and_lamp lifestyles; 1f6d2 shopping_cart shopping_trolley; 1f6ac smoking
26b0 coffin burial grave; 1f5ff rock_carving moyai; 1f4f6 cell_reception signal_strength signal_bars
1f4f3 vibration_mode; 1f4f4 phone_off; 1f6be wc water_closet; 1f6bb restroom
267f accessible wheelchair disabled; 1f6ad no_smoking; 1f6af do_not_litter; 1f6b1 non-potable_water
1f6b3 no_bicycles; 1f6b7 no_pedestrians; 1f6b8 children_crossing school_crossing drive_with_care
2622 radioactive nuclear; 2623 biohazard; 2b55 circle; 1f4db name_badge; 1f530 beginner
2620 skull_and_crossbones pirate death hazard toxic poison; 1f3b4 playing_cards; 1f004 mahjong; 1f0cf joker
1f52e crystal_ball oracle future fortune_telling; 1f9ff nazar_amulet bead charm evil_eye nazar talisman
1f4ff prayer_beads; 1f488 barber striped_pole; 2697 alchemy alembic; 1f52f dotted_six_pointed_star fortune
1f4ae white_flower; 1f4b9 stock_market; 1f4f5 no_phones; 1f331 seedling sprout; 1f332 evergreen_tree
1f333 tree deciduous_tree; 1f334 palm_tree; 1f335 cactus; 1f337 tulip flower; 1f338 cherry_blossom
1f339 rose; 1f33b sunflower; 1f33c blossom; 1f33a hibiscus; 1f340 lucky four_leaf_clover; 1f341 maple_leaf
1f342 fallen_leaf; 1f343 leaves wind fall; 1f33f herb plant; 1f490 bouquet; 1f324 mostly_sunny; 1f325 cloudy
1f326 sunshowers sun_and_rain partly_sunny_with_rain; 26c5 partly_sunny partly_cloudy
1f329 lightning lightning_storm; 1f32a tornado; 1f32b fog hazy; 1f32c windy mother_nature; 26c4 frosty
2604 comet meteor; 1f31e sun_face; 1f31d moon_face; 1f31a new_moon_face; 1f315 full_moon; 1f311 new_moon
1f313 first_quarter_moon; 1f30c milky_way night_sky; 1f320 shooting_star wish; 2614 umbrella_with_rain
1f300 cyclone hurricane typhoon; 1f301 foggy; 1f302 closed_umbrella; 1f303 night; 1f304 mountain_sunrise
1f305 sunrise ocean_sunrise; 1f306 sunset; 1f307 city_sunrise; 1f309 bridge; 1f407 rabbit; 1f430 bunny
1f401 mouse; 1f400 rat; 1f439 hamster; 1f43a wolf; 1f981 lion; 1f42f tiger_cub; 1f405 tiger; 1f434 pony
1f40e horse; 1f42e calf; 1f437 piglet; 1f416 pig oink; 1f411 sheep baa; 1f42d dormouse; 1f412 monkey
1f435 monkey_face; 1f649 hear_no_evil; 1f64a speak_no_evil; 1f414 chicken cluck
1f413 rooster alarm cock-a-doodle-doo; 1f423 hatching hatching_chick; 1f424 chick baby_chick; 1f426 bird
1f985 eagle; 1f989 owl; 1f40d snake hiss; 1f40a crocodile; 1f433 whale; 1f40b humpback_whale; 1f988 shark
1f980 crab; 1f990 shrimp; 1f991 squid; 1f40c snail; 1f41c ant; 1f577 spider; 1f578 web spider_web
1f982 scorpion; 1f41e lady_beetle ladybird ladybug; 1f418 elephant; 1f98f rhinoceros; 1f992 giraffe spots
1f993 zebra stripe; 1f98d gorilla; 1f994 hedgehog spiny; 1f987 bat; 1f43e paw_prints paws; 1f436 puppy
1f431 kitten; 1f432 dragon_face; 1f996 t_rex tyrannosaurus_rex
1f995 sauropod brachiosaurus brontosaurus diplodocus; 1f98e lizard gecko; 1f997 cricket grasshopper
1f99f mosquito malaria; 1f9a0 microbe amoeba; 1f41a shell seashell conch spiral_shell; 1f420 tropical_fish
1f421 blowfish; 1f42a arabian_camel; 1f42b camel; 1f410 goat; 1f40f ram; 1f403 water_buffalo; 1f402 ox bull
1f404 cow; 1f406 leopard; 1f98c deer; 1f43f chipmunk; 1f983 turkey; 1f54a dove dove_of_peace
1f99c parrot talk; 1f9a9 flamingo flamboyant; 1f99d raccoon curious sly; 1f951 avocado; 1f95d kiwi
1f34b lemon; 1f34a orange tangerine mandarin; 1f347 grapes; 1f348 melon; 1f352 cherries; 1f351 peach
1f34d pineapple; 1f965 coconut piña_colada pina_colada; 1f345 tomato; 1f346 eggplant; 1f955 carrot
1f33d corn maize; 1f336 hot_pepper chili_pepper; 1f952 cucumber; 1f966 broccoli wild_cabbage; 1f344 mushroom
1f95c peanuts; 1f330 chestnut; 1f35e bread; 1f950 croissant; 1f956 baguette; 1f968 pretzel twisted
1f95e pancakes breakfast; 1f357 drumstick poultry; 1f356 meat; 1f953 bacon; 1f32d hotdog; 1f96a sandwich
1f32f burrito; 1f959 doner_kebab shawarma souvlaki stuffed_flatbread; 1f95a egg; 1f373 cooking
1f372 food soup stew; 1f963 bowl_with_spoon cereal congee; 1f9c2 salt shaker; 1f96b canned_food can
1f371 bento; 1f358 senbei rice_cracker; 1f359 onigiri; 1f35a rice; 1f35b curry; 1f35d spaghetti
1f360 yam sweet_potato; 1f362 oden; 1f364 tempura; 1f365 naruto; 1f361 dango
1f95f dumpling empanada gyōza jiaozi pierogi potsticker gyoza; 1f960 fortune_cookie prophecy
1f961 takeout_box oyster_pail; 1f366 soft_serve soft_ice_cream; 1f367 shaved_ice; 1f967 pie filling pastry
1f36b chocolate; 1f36c candy; 1f36d lollipop; 1f36e custard flan; 1f36f honey; 1f37c baby_bottle
1f95b milk glass_of_milk; 1f376 sake; 1f37e champagne; 1f379 tropical_drink; 1f942 clink toast
1f943 small_glass; 1f964 cup_with_straw soda; 1f962 chopsticks hashi
1f37d hungry meal table_setting fork_and_knife_with_plate lets_eat; 1f374 fork_and_knife eating_utensils
1f944 spoon; 1f350 pear; 1f34f green_apple; 1f9c1 cupcake; 1f9c3 beverage_box beverage box straw
1f9c4 garlic; 1f9c5 onion; 1f9c6 falafel chickpea meatball; 1f9c7 waffle indecisive iron; 1f9c8 butter dairy
1f9c9 mate; 1f9ca ice ice_cube iceberg; 1f96f bagel schmear; 1f96e moon_cake autumn festival yuèbǐng yuebing
1f96d mango fruit; 1f96c leafy_green bok_choy cabbage kale lettuce; 1f9aa oyster; 26bd football soccer
26be baseball; 1f3c0 basketball; 1f3d0 volleyball; 1f3c8 american_football; 1f3c9 rugby; 1f3be tennis
1f3f8 badminton; 1f3d2 ice_hockey; 1f3d1 field_hockey; 1f3cf cricket_game; 26f3 hole_in_one; 1f3a3 fishing
1f94a boxing_glove; 1f94b black_belt keikogi dogi martial_arts; 1f3bd running_shirt; 26f8 ice_skate
1f3bf ski; 1f6f7 sled sledge sleigh; 1f94c curling_stone; 1f3c3 running runner; 1f6b6 walking pedestrian
1f483 dancer; 1f57a dancing disco; 1f46f dancers; 1f9d8 person_in_lotus_position; 1f3c4 surf; 1f3ca swim
1f6b4 cyclist; 1f6b5 mountain_biker; 1f3cb lift work_out weight_lift gym; 1f93a fencing; 1f93c wrestling
1f938 cartwheel acrobatics gymnastics tumbling; 1f476 baby; 1f9d2 child young; 1f466 boy; 1f467 girl
1f9d1 person; 1f471 person_blond_hair blond_haired_person; 1f468 man; 1f469 woman; 1f9d3 older_person old
1f474 older_man elderly_man; 1f475 older_woman elderly_woman; 1f46a family
1f46b man_and_woman_holding_hands man_and_woman_couple; 1f46c two_men_holding_hands men_couple
1f46d two_women_holding_hands women_couple; 1f464 silhouette shadow; 1f465 silhouettes shadows
1f5e3 speaking_head; 1f46e police cop; 1f477 construction_worker; 1f482 guard
1f575 detective spy sleuth agent sneaky; 1f9d9 mage; 1f9da fairy; 1f9db vampire; 1f9dc merperson; 1f9dd elf
1f9de genie; 1f9df zombie; 1f47c angel; 1f385 santa; 1f936 mother_christmas mrs_claus; 1f9b8 superhero
1f9b9 supervillain; 1f478 princess; 1f934 prince; 1f470 bride; 1f930 pregnant expecting
1f931 breast_feeding breast; 1f9d5 woman_with_headscarf headscarf hijab mantilla tichel; 1f473 turban
1f472 gua_pi_mao; 1f9d4 person_beard; 1f486 massage; 1f487 haircut; 1f64d person_frowning
1f64e person_pouting
`;

const codes: Record<string, string> = {};
const canonical = new Map<string, string>();
for (const entry of TABLE.split(/[;\n]/)) {
  const [code, ...names] = entry.trim().split(" ");
  if (code === undefined || code === "" || names.length === 0) continue;
  canonical.set(code, names[0]!);
  for (const name of names) codes[name] = code;
}

/** Unicode emoji name → code point(s), as the server's `name_to_codepoint`. */
export const EMOJI_CODES: Readonly<Record<string, string>> = codes;
/** Code point(s) → the server's canonical name, as its `codepoint_to_name`. */
export const CANONICAL_NAMES: ReadonlyMap<string, string> = canonical;
